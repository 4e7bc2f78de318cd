"""Who goes first: a roll-off. Everyone rolls three dice; the best score starts; tied players roll again.

The score is the pip total with ordinary dice and the number of dots with LCR dice (a W or a letter
scores nothing).

>>> from lcr_pi.rules.config import GameConfig
>>> off = RollOff.start(GameConfig.create(["Ann", "Bob", "Cy"]))
>>> off.next_player
'Ann'
>>> off, _ = off.record("Ann", "6 6 1")
>>> off, _ = off.record("Bob", "6 5 2")
>>> off, events = off.record("Cy", "3 3 3")
>>> off.round, off.contenders, off.winner
(2, (0, 1), None)
>>> off, _ = off.record("Ann", "1 1 1")
>>> off, events = off.record("Bob", "2 1 1")
>>> off.winner, events[-1].kind
(1, 'roll_off_won')
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lcr_pi.errors import UserError
from lcr_pi.rules.config import MAX_DICE, GameConfig
from lcr_pi.rules.events import Event, RollOffRolled, RollOffStarted, RollOffWon
from lcr_pi.rules.faces import Face, parse_face, pip_value, roll_tokens

ROLL_OFF_DICE = MAX_DICE


def roll_off_score(faces) -> int:
    """Score one roll-off roll: pip total for ordinary dice, dots for LCR dice.

    >>> roll_off_score(["6", "4", "1"]), roll_off_score(["L", "dot", "."])
    (11, 2)
    """
    tokens = roll_tokens(faces)
    if len(tokens) != ROLL_OFF_DICE:
        raise UserError(f"a roll-off roll has {ROLL_OFF_DICE} dice, got {len(tokens)}")
    pips = [pip_value(t) for t in tokens]
    if all(p is not None for p in pips):
        return sum(pips)
    if any(p is not None for p in pips):
        raise UserError("a roll-off roll mixes pip dice and LCR dice; roll one kind")
    return sum(1 for t in tokens if parse_face(t) is Face.DOT)


@dataclass(frozen=True)
class RollOff:
    """The state of a roll-off: who is still in it, this round's scores so far, and the winner."""

    config: GameConfig
    contenders: tuple[int, ...]
    scores: tuple[tuple[int, int], ...] = ()  # (seat, score) in the order rolled this round
    round: int = 1
    winner: int | None = None

    @classmethod
    def start(cls, config: GameConfig, contenders=None) -> "RollOff":
        seats = tuple(range(config.n_players)) if contenders is None else tuple(contenders)
        if len(seats) < 2:
            raise UserError("a roll-off needs at least two players")
        return cls(config, seats)

    def opening_events(self) -> tuple[Event, ...]:
        return (RollOffStarted(self.contenders, tuple(self.config.players[s] for s in self.contenders), self.round),)

    @property
    def next_seat(self) -> int | None:
        """The next contender to roll this round, in seat order (None when decided)."""
        if self.winner is not None:
            return None
        rolled = {seat for seat, _ in self.scores}
        return next(s for s in self.contenders if s not in rolled)

    @property
    def next_player(self) -> str | None:
        seat = self.next_seat
        return None if seat is None else self.config.players[seat]

    def record(self, player, faces) -> tuple["RollOff", tuple[Event, ...]]:
        """Record ``player``'s roll; contenders roll in seat order."""
        if self.winner is not None:
            raise UserError(f"the roll-off is over: {self.config.players[self.winner]} goes first")
        seat = player if isinstance(player, int) and not isinstance(player, bool) else self.config.seat_of(player)
        expected = self.next_seat
        if seat != expected:
            raise UserError(
                f"it is {self.config.players[expected]}'s roll in the roll-off, not {self.config.players[seat]}'s"
            )
        score = roll_off_score(faces)
        scores = self.scores + ((seat, score),)
        events: list[Event] = [RollOffRolled(seat, self.config.players[seat], roll_tokens(faces), score)]
        if len(scores) < len(self.contenders):
            return replace(self, scores=scores), tuple(events)
        best = max(s for _, s in scores)
        tied = tuple(sorted(seat for seat, s in scores if s == best))
        if len(tied) == 1:
            events.append(RollOffWon(tied[0], self.config.players[tied[0]], best))
            return replace(self, scores=scores, winner=tied[0]), tuple(events)
        nxt = RollOff(self.config, tied, (), self.round + 1)
        events.extend(nxt.opening_events())
        return nxt, tuple(events)
