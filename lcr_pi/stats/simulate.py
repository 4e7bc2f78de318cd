"""Monte Carlo: many LCR games at once, vectorised over games with numpy.

Every unfinished game advances by one roll per step; players without chips are skipped within the step
(a skip is not a roll), finished games drop out. A roll is one random integer in 0..215 looked up in a
table of dice outcomes (:mod:`lcr_pi.stats.dice`). Wild robbing follows :mod:`lcr_pi.stats.policy`.

>>> import numpy as np
>>> result = simulate({"players": 3, "chips": 3}, 2000, np.random.default_rng(1))
>>> result.games, len(result.win_rate), round(sum(result.win_rate), 9)
(2000, 3, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from lcr_pi.errors import UserError
from lcr_pi.rules.config import MAX_DICE, GameConfig
from lcr_pi.stats.dice import ROLLS, roll_tables
from lcr_pi.stats.turns import NO_WINNER, Rules, next_holder, resolve_rolls

#: Percentiles of rolls per game that reports show.
PERCENTILES = (5, 25, 50, 75, 95)

#: Games played side by side; more are played in rounds of this size (bounded memory, same speed).
CHUNK_GAMES = 50_000


def table_config(players: int, chips: int = 3, variant: str = "classic") -> GameConfig:
    """A config for ``players`` anonymous seats ("Seat 1", ...), validated like any game's.

    >>> table_config(4, 2, "wild").variant_name
    'wild'
    """
    if isinstance(players, bool) or not isinstance(players, int):
        raise UserError(f"players must be a whole number, got {players!r}")
    if players < 3:
        raise UserError(f"LCR needs at least 3 players, got {players}")
    return GameConfig.create(
        [f"Seat {i + 1}" for i in range(max(players, 0))], starting_chips=chips, variant=variant
    )


def as_config(config_or_params: GameConfig | Mapping) -> GameConfig:
    """Accept a :class:`GameConfig` or a mapping with ``players`` (a count), ``chips`` and ``variant``."""
    if isinstance(config_or_params, GameConfig):
        return config_or_params
    if isinstance(config_or_params, Mapping):
        unknown = set(config_or_params) - {"players", "chips", "variant"}
        if unknown:
            raise UserError(f"unknown simulation parameter(s): {', '.join(sorted(unknown))}")
        if "players" not in config_or_params:
            raise UserError("simulation parameters need 'players' (how many)")
        return table_config(
            config_or_params["players"],
            config_or_params.get("chips", 3),
            config_or_params.get("variant", "classic"),
        )
    raise UserError(f"expected a GameConfig or parameters, got {type(config_or_params).__name__}")


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Outcome of :func:`simulate`: per game winner, rolls and final position."""

    config: GameConfig
    winners: np.ndarray  # (games,) winning seat
    rolls: np.ndarray  # (games,) rolls (turns with dice) per game
    final_chips: np.ndarray  # (games, players)
    final_pot: np.ndarray  # (games,)

    @property
    def games(self) -> int:
        return int(self.winners.size)

    @property
    def wins(self) -> tuple[int, ...]:
        return tuple(int(x) for x in np.bincount(self.winners, minlength=self.config.n_players))

    @property
    def win_rate(self) -> tuple[float, ...]:
        return tuple(w / self.games for w in self.wins)

    @property
    def std_error(self) -> tuple[float, ...]:
        """Binomial standard error of each seat's win rate."""
        return tuple(float(np.sqrt(p * (1 - p) / self.games)) for p in self.win_rate)

    @property
    def mean_rolls(self) -> float:
        return float(self.rolls.mean())

    @property
    def rolls_percentiles(self) -> dict[str, float]:
        """``p5`` ... ``p95`` and ``max`` of rolls per game."""
        values = np.percentile(self.rolls, PERCENTILES)
        out = {f"p{q}": float(v) for q, v in zip(PERCENTILES, values)}
        out["max"] = float(self.rolls.max())
        return out


def simulate(config_or_params: GameConfig | Mapping, games: int, rng: np.random.Generator) -> SimulationResult:
    """Play ``games`` games from the opening position (seat 0 rolls first). Pure apart from ``rng``."""
    config = as_config(config_or_params)
    games = _check_games(games)
    n = config.n_players
    parts = []
    for first in range(0, games, CHUNK_GAMES):
        size = min(CHUNK_GAMES, games - first)
        chips = np.full((size, n), config.starting_chips, dtype=_chip_dtype(config.total_chips))
        pot = np.zeros(size, dtype=chips.dtype)
        current = np.zeros(size, dtype=np.int64)
        parts.append(_play(config, chips, pot, current, rng))
    if len(parts) == 1:
        return parts[0]
    return SimulationResult(
        config,
        np.concatenate([p.winners for p in parts]),
        np.concatenate([p.rolls for p in parts]),
        np.concatenate([p.final_chips for p in parts]),
        np.concatenate([p.final_pot for p in parts]),
    )


def simulate_from(
    config: GameConfig,
    chips: Sequence[int],
    current: int,
    games: int,
    rng: np.random.Generator,
    *,
    pot: int = 0,
) -> SimulationResult:
    """Play ``games`` games on from a mid-game position; ``current`` is the seat to roll next.

    A ``current`` seat with no chips is skipped as in a real game. A position that is already decided
    (classic: one player holds chips) gives every game to that player with no roll.
    """
    games = _check_games(games)
    start = np.asarray(chips, dtype=np.int64)
    total = int(start.sum()) + int(pot)
    dtype = _chip_dtype(max(total, 1))
    all_chips = np.tile(start.astype(dtype), (games, 1))
    all_pot = np.full(games, pot, dtype=dtype)
    all_current = np.full(games, current, dtype=np.int64)
    return _play(config, all_chips, all_pot, all_current, rng, total=total)


def _check_games(games) -> int:
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise UserError(f"games must be a whole number of at least 1, got {games!r}")
    return int(games)


def _chip_dtype(total: int):
    return np.int16 if total < 2**15 else np.int64


def _play(
    config: GameConfig,
    chips: np.ndarray,
    pot: np.ndarray,
    current: np.ndarray,
    rng: np.random.Generator,
    *,
    total: int | None = None,
) -> SimulationResult:
    rules = Rules.of(config)
    games, n = chips.shape
    if total is None:
        total = config.total_chips
    winners = np.full(games, NO_WINNER, dtype=np.int64)
    rolls = np.zeros(games, dtype=np.int64)
    final_chips = chips.copy()
    final_pot = pot.copy()

    # A position may already be decided, and the seat to play may have to be skipped.
    if not rules.last_chip_wins:
        decided = (chips > 0).sum(axis=1) == 1
        winners[decided] = (chips[decided] > 0).argmax(axis=1)
    current = next_holder(chips, current, include_self=True, start=0)
    if rules.last_chip_wins and (current == NO_WINNER).any():
        raise UserError("no chips are left outside the pot, so this game is already over")
    if not rules.last_chip_wins and ((chips > 0).sum(axis=1) == 0).any():
        raise UserError("no player holds chips, so this game is already over")

    ids = np.flatnonzero(winners == NO_WINNER)
    chips, pot, current = chips[ids], pot[ids], current[ids]
    table = roll_tables(rules.wild).reshape(4, (MAX_DICE + 1) * ROLLS).astype(chips.dtype)
    step = 0
    while ids.size:
        step += 1
        active = ids.size
        held = chips[np.arange(active), current]
        dice = np.minimum(held, MAX_DICE).astype(np.int64)
        counts = table[:, dice * ROLLS + rng.integers(0, ROLLS, active)]
        winner, following = resolve_rolls(chips, pot, current, counts, rules, total)
        done = winner != NO_WINNER
        if done.any():
            finished = ids[done]
            winners[finished] = winner[done]
            rolls[finished] = step
            final_chips[finished] = chips[done]
            final_pot[finished] = pot[done]
            keep = ~done
            ids, chips, pot, following = ids[keep], chips[keep], pot[keep], following[keep]
        current = following
    return SimulationResult(config, winners, rolls, final_chips, final_pot)
