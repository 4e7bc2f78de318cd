"""Several games in a row with a win tally: first to K wins, or best of N.

Best of N ends early once nobody can catch the leader; if the top is still tied after N games, the
tied players keep playing (everyone at the table plays; only a tied leader's win can break it) until
one leads alone.

>>> from lcr_pi.rules.config import GameConfig
>>> s = Series.start(GameConfig.create(["Ann", "Bob", "Cy"]), SeriesRules(first_to=2, next_starter="winner"))
>>> s, _ = s.record_game(winner=1, first=0)
>>> s.wins, s.next_first(), s.champion
((0, 1, 0), 1, None)
>>> s, events = s.record_game(winner=1, first=1)
>>> s.champion, events[-1].kind
(1, 'series_won')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from lcr_pi.errors import UserError
from lcr_pi.rules.config import GameConfig
from lcr_pi.rules.events import Event, SeriesTally, SeriesWon

NextStarter = Literal["winner", "next-seat", "roll-off"]
NEXT_STARTERS: tuple[str, ...] = ("winner", "next-seat", "roll-off")


@dataclass(frozen=True)
class SeriesRules:
    """``first_to`` K wins, or ``best_of`` N games (exactly one of them), and who starts the next game."""

    first_to: int | None = None
    best_of: int | None = None
    next_starter: NextStarter = "next-seat"

    def __post_init__(self):
        if (self.first_to is None) == (self.best_of is None):
            raise UserError("a series is either 'first_to' K wins or 'best_of' N games: give exactly one")
        for key in ("first_to", "best_of"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise UserError(f"series {key} must be a whole number of at least 1, got {value!r}")
        if self.next_starter not in NEXT_STARTERS:
            raise UserError(
                f"series next_starter must be one of {', '.join(NEXT_STARTERS)}, got {self.next_starter!r}"
            )

    def to_dict(self) -> dict:
        return {"first_to": self.first_to, "best_of": self.best_of, "next_starter": self.next_starter}


@dataclass(frozen=True)
class Series:
    """The tally of a series; ``last_first`` is who started the last game (for ``next-seat``)."""

    config: GameConfig
    rules: SeriesRules
    wins: tuple[int, ...]
    games: int = 0
    last_first: int | None = None
    last_winner: int | None = None
    champion: int | None = None

    @classmethod
    def start(cls, config: GameConfig, rules: SeriesRules) -> "Series":
        return cls(config, rules, (0,) * config.n_players)

    @property
    def is_over(self) -> bool:
        return self.champion is not None

    def record_game(self, winner: int, first: int) -> tuple["Series", tuple[Event, ...]]:
        """Add a finished game won by seat ``winner`` that seat ``first`` started."""
        if self.is_over:
            raise UserError(f"the series is over: {self.config.players[self.champion]} won it")
        wins = list(self.wins)
        wins[winner] += 1
        series = replace(self, wins=tuple(wins), games=self.games + 1, last_first=first, last_winner=winner)
        events: list[Event] = [SeriesTally(series.wins, series.games, winner, self.config.players[winner])]
        champion = series._decided()
        if champion is not None:
            series = replace(series, champion=champion)
            events.append(SeriesWon(champion, self.config.players[champion], series.wins, series.games))
        return series, tuple(events)

    def _decided(self) -> int | None:
        ranked = sorted(range(len(self.wins)), key=lambda s: -self.wins[s])
        leader, runner_up = ranked[0], ranked[1]
        lead, second = self.wins[leader], self.wins[runner_up]
        if self.rules.first_to is not None:
            return leader if lead >= self.rules.first_to else None
        remaining = max(self.rules.best_of - self.games, 0)
        if lead > second + remaining:
            return leader
        return None

    def next_first(self) -> int | None:
        """Who starts the next game; None when the rules call for a roll-off (see :mod:`.rolloff`)."""
        if self.last_first is None:
            raise UserError("no game of this series has finished yet: the first starter is chosen at setup")
        if self.rules.next_starter == "roll-off":
            return None
        if self.rules.next_starter == "winner":
            return self.last_winner
        return self.config.left_of(self.last_first)

    def to_dict(self) -> dict:
        return {
            "rules": self.rules.to_dict(),
            "wins": list(self.wins),
            "games": self.games,
            "last_first": self.last_first,
            "last_winner": self.last_winner,
            "champion": self.champion,
        }

    @classmethod
    def from_dict(cls, config: GameConfig, data: dict) -> "Series":
        try:
            rules = SeriesRules(**data["rules"])
            wins = tuple(int(w) for w in data["wins"])
            if len(wins) != config.n_players:
                raise UserError(f"series tally has {len(wins)} entries for {config.n_players} players")
            return cls(config, rules, wins, int(data["games"]), data.get("last_first"), data.get("last_winner"),
                       data.get("champion"))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"saved series is damaged ({exc})") from None
