"""The rules of Left Center Right as pure functions over an immutable :class:`GameState`.

Nothing here reads dice, talks or touches files: a roll goes in as faces, a new state and the events
that describe it come out.

>>> from lcr_pi.rules.config import GameConfig
>>> state = GameState.start(GameConfig.create(["Ann", "Bob", "Cy"]))
>>> state.chips, state.current_player, state.dice_to_roll
((3, 3, 3), 'Ann', 3)
>>> step = roll(state, "L C .")
>>> step.state.chips, step.state.pot, step.state.current_player
((1, 4, 3), 1, 'Bob')
>>> [e.kind for e in step.events]
['roll_resolved', 'turn_started']

Wild games ask the roller whom to rob when there is a real choice:

>>> wild = GameState.start(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild"))
>>> step = roll(wild, "W . .")
>>> step.state.pending.take, step.state.pending.eligible
(1, (1, 2))
>>> step = choose_victims(step.state, "Ann", ["Cy"])
>>> step.state.chips
(4, 3, 2)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from itertools import combinations_with_replacement

from lcr_pi.errors import UserError
from lcr_pi.rules.config import MAX_DICE, GameConfig
from lcr_pi.rules.events import (
    ChipMove,
    ChipsTaken,
    DecisionNeeded,
    Event,
    GameWon,
    PlayerSkipped,
    PotTaken,
    RollResolved,
    TurnStarted,
    WildsWasted,
)
from lcr_pi.rules.faces import Face, parse_faces


@dataclass(frozen=True)
class PendingWild:
    """A Wild roll waiting for the roller to name whom to take ``take`` chips from."""

    seat: int
    take: int
    eligible: tuple[int, ...]


@dataclass(frozen=True)
class GameState:
    """Where every chip is and whose turn it is. Immutable: every rule returns a new state.

    ``current`` is the seat to roll next (while ``pending`` is set, the seat that must decide; once the
    game is over, the winner). ``rolls`` counts the rolls made so far.
    """

    config: GameConfig
    chips: tuple[int, ...]
    pot: int
    current: int
    first: int = 0
    rolls: int = 0
    winner: int | None = None
    pending: PendingWild | None = None

    @classmethod
    def start(cls, config: GameConfig, first: int = 0) -> "GameState":
        """The opening position: everyone holds the starting chips and ``first`` rolls first."""
        if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < config.n_players:
            raise UserError(f"first player must be a seat from 0 to {config.n_players - 1}, got {first!r}")
        return cls(config=config, chips=(config.starting_chips,) * config.n_players, pot=0, current=first, first=first)

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def current_player(self) -> str:
        return self.config.players[self.current]

    @property
    def dice_to_roll(self) -> int:
        """How many dice the current player rolls now (0 once the game is over or a decision is due)."""
        if self.is_over or self.pending is not None:
            return 0
        return min(self.chips[self.current], MAX_DICE)

    @property
    def holders(self) -> tuple[int, ...]:
        """Seats that hold at least one chip."""
        return tuple(seat for seat, n in enumerate(self.chips) if n > 0)

    def to_dict(self) -> dict:
        pending = None
        if self.pending is not None:
            pending = {"seat": self.pending.seat, "take": self.pending.take, "eligible": list(self.pending.eligible)}
        return {
            "chips": list(self.chips),
            "pot": self.pot,
            "current": self.current,
            "first": self.first,
            "rolls": self.rolls,
            "winner": self.winner,
            "pending": pending,
        }


@dataclass(frozen=True)
class Step:
    """The result of one rule application: the new state and what happened, in order."""

    state: GameState
    events: tuple[Event, ...]


def opening_events(state: GameState) -> tuple[Event, ...]:
    """The announcement of the first turn of a fresh game."""
    return (_turn_started(state, state.current),)


def roll(state: GameState, faces) -> Step:
    """Apply the current player's roll.

    ``faces`` may be LCR names or pip values, as a string (``"L . C"``, ``"4 1 6"``) or a sequence.
    The number of dice must match what the player rolls (their chips, at most 3).
    """
    _check_can_act(state)
    config = state.config
    parsed = parse_faces(faces, wild_pip=config.effective_wild_pip)
    seat = state.current
    player = config.players[seat]
    expected = state.dice_to_roll
    if len(parsed) != expected:
        raise UserError(
            f"{player} holds {state.chips[seat]} chip{'s' if state.chips[seat] != 1 else ''} and rolls "
            f"{expected} {'die' if expected == 1 else 'dice'}, but the roll has {len(parsed)}"
        )
    if Face.WILD in parsed and not config.wild:
        raise UserError("this game is not played with Wild dice, but the roll has a W face")

    chips = list(state.chips)
    pot = state.pot
    moves = []
    for face in parsed:
        if face is Face.LEFT:
            receiver = config.left_of(seat)
        elif face is Face.RIGHT:
            receiver = config.right_of(seat)
        elif face is Face.CENTER:
            receiver = None
        else:
            continue
        chips[seat] -= 1
        if receiver is None:
            pot += 1
        else:
            chips[receiver] += 1
        moves.append(ChipMove(face.value, seat, receiver))

    state = replace(state, chips=tuple(chips), pot=pot, rolls=state.rolls + 1)
    events: list[Event] = [
        RollResolved(seat, player, tuple(f.value for f in parsed), tuple(moves), state.chips, state.pot)
    ]

    wilds = parsed.count(Face.WILD)
    if wilds == MAX_DICE:
        if config.three_wilds == "win":
            winner = replace(state, winner=seat, current=seat)
            events.append(GameWon(seat, player, winner.pot, winner.chips, "three-wilds"))
            return Step(winner, tuple(events))
        events.append(PotTaken(seat, player, state.pot))
        chips = list(state.chips)
        chips[seat] += state.pot
        state = replace(state, chips=tuple(chips), pot=0)
    elif wilds:
        choices = victim_choices(state, seat, wilds)
        if not choices:
            events.append(WildsWasted(seat, player, wilds))
        elif len(choices) == 1:
            state, taken = _take_chips(state, seat, choices[0], chosen=False)
            events.append(taken)
        else:
            take = len(choices[0])
            eligible = tuple(sorted({victim for choice in choices for victim in choice}))
            pending = PendingWild(seat, take, eligible)
            events.append(DecisionNeeded(seat, player, take, eligible))
            return Step(replace(state, pending=pending), tuple(events))
    return _end_turn(state, seat, events, rolled_center=Face.CENTER in parsed)


def choose_victims(state: GameState, decider, victims) -> Step:
    """Settle a pending Wild decision: ``decider`` (name or seat) takes one chip per entry of ``victims``.

    Two W may take two chips from one player (name them twice) or one each from two players.
    """
    if state.is_over:
        raise UserError(f"the game is over: {state.config.players[state.winner]} has won")
    pending = state.pending
    if pending is None:
        raise UserError("no Wild decision is waiting")
    config = state.config
    seat = _seat(config, decider)
    player = config.players[pending.seat]
    if seat != pending.seat:
        raise UserError(f"it is {player} who chooses whom to take chips from, not {config.players[seat]}")
    if isinstance(victims, (str, int)):
        victims = [victims]
    chosen = tuple(_seat(config, v) for v in victims)
    if len(chosen) != pending.take:
        raise UserError(
            f"{player} takes {pending.take} chip{'s' if pending.take != 1 else ''}: "
            f"name {pending.take} player{'s' if pending.take != 1 else ''} (a player twice for two chips), "
            f"got {len(chosen)}"
        )
    for victim, count in Counter(chosen).items():
        name = config.players[victim]
        if victim == seat:
            raise UserError(f"{player} cannot take chips from themself")
        held = state.chips[victim]
        if held == 0:
            raise UserError(f"{name} has no chips to take")
        if count > held:
            raise UserError(f"{name} has only {held} chip{'s' if held != 1 else ''}, cannot take {count}")
    state = replace(state, pending=None)
    state, taken = _take_chips(state, seat, tuple(sorted(chosen)), chosen=True)
    return _end_turn(state, seat, [taken], rolled_center=False)


def victim_choices(state: GameState, seat: int, wilds: int) -> list[tuple[int, ...]]:
    """Every legal way for ``seat`` to spend ``wilds`` W faces: sorted tuples of victim seats.

    When the others hold fewer chips than W faces, the roller takes all there is; when nobody else
    holds a chip the list is empty.

    >>> from lcr_pi.rules.config import GameConfig
    >>> s = GameState(GameConfig.create(["A", "B", "C", "D"], variant="wild"), (2, 1, 0, 3), 3, 0)
    >>> victim_choices(s, 0, 2)
    [(1, 3), (3, 3)]
    """
    others = {v: n for v, n in enumerate(state.chips) if v != seat and n > 0}
    take = min(wilds, sum(others.values()))
    if take == 0:
        return []
    result = []
    for combo in combinations_with_replacement(sorted(others), take):
        if all(combo.count(v) <= others[v] for v in set(combo)):
            result.append(combo)
    return result


def _take_chips(state: GameState, seat: int, victims: tuple[int, ...], *, chosen: bool):
    chips = list(state.chips)
    moves = []
    for victim in victims:
        chips[victim] -= 1
        chips[seat] += 1
        moves.append(ChipMove("W", victim, seat))
    state = replace(state, chips=tuple(chips))
    event = ChipsTaken(seat, state.config.players[seat], victims, tuple(moves), state.chips, state.pot, chosen)
    return state, event


def _end_turn(state: GameState, seat: int, events: list[Event], *, rolled_center: bool) -> Step:
    """Check for a winner, then pass the turn left past players without chips."""
    config = state.config
    holders = state.holders
    if config.last_chip_wins:
        if not holders:
            # Only C faces empty the table, so this roll put the last chip in the pot.
            assert rolled_center
            events.append(GameWon(seat, config.players[seat], state.pot, state.chips, "last-chip"))
            return Step(replace(state, winner=seat, current=seat), tuple(events))
    elif len(holders) == 1:
        (winner,) = holders
        events.append(GameWon(winner, config.players[winner], state.pot, state.chips, "last-holder"))
        return Step(replace(state, winner=winner, current=winner), tuple(events))

    nxt = config.left_of(seat)
    while state.chips[nxt] == 0:
        events.append(PlayerSkipped(nxt, config.players[nxt]))
        nxt = config.left_of(nxt)
    state = replace(state, current=nxt)
    events.append(_turn_started(state, nxt))
    return Step(state, tuple(events))


def _turn_started(state: GameState, seat: int) -> TurnStarted:
    return TurnStarted(seat, state.config.players[seat], min(state.chips[seat], MAX_DICE), state.chips[seat])


def _check_can_act(state: GameState) -> None:
    if state.is_over:
        raise UserError(f"the game is over: {state.config.players[state.winner]} has won; start a new game")
    if state.pending is not None:
        p = state.pending
        raise UserError(
            f"{state.config.players[p.seat]} must first choose whom to take "
            f"{p.take} chip{'s' if p.take != 1 else ''} from"
        )


def _seat(config: GameConfig, who) -> int:
    if isinstance(who, bool):
        raise UserError(f"not a player: {who!r}")
    if isinstance(who, int):
        if not 0 <= who < config.n_players:
            raise UserError(f"no seat {who}: seats are 0 to {config.n_players - 1}")
        return who
    return config.seat_of(who)
