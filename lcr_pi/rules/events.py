"""What happened at the table, one event per step, for the speech, LED and log layers.

Events are frozen dataclasses. Each knows its JSON form (``to_dict``) and :func:`event_from_dict`
rebuilds it exactly, so a saved event log round-trips.

>>> e = TurnStarted(seat=0, player="Ann", dice=3, chips=3)
>>> event_from_dict(e.to_dict()) == e
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from lcr_pi.errors import UserError

POT = "pot"


@dataclass(frozen=True)
class ChipMove:
    """One chip leaving ``giver``'s stack for ``receiver`` (a seat) or the pot (``receiver is None``).

    ``face`` is the die face that moved it: "L", "C", "R" or "W" (a steal: the giver is the victim).
    """

    face: str
    giver: int
    receiver: int | None

    @property
    def to_pot(self) -> bool:
        return self.receiver is None


@dataclass(frozen=True)
class Event:
    """Base of all events; ``kind`` names the event in JSON and logs."""

    @property
    def kind(self) -> str:
        return _KIND_OF[type(self)]

    def to_dict(self) -> dict:
        data = asdict(self)
        if "moves" in data:
            data["moves"] = [[m["face"], m["giver"], m["receiver"]] for m in data["moves"]]
        for key, value in data.items():
            if isinstance(value, tuple):
                data[key] = list(value)
        return {"event": self.kind, **data}


@dataclass(frozen=True)
class GameStarted(Event):
    players: tuple[str, ...]
    starting_chips: int
    variant: str
    first_seat: int


@dataclass(frozen=True)
class TurnStarted(Event):
    """It is ``player``'s turn: roll ``dice`` dice."""

    seat: int
    player: str
    dice: int
    chips: int


@dataclass(frozen=True)
class PlayerSkipped(Event):
    """``player`` holds no chips and skips this turn (but stays in the game)."""

    seat: int
    player: str


@dataclass(frozen=True)
class RollResolved(Event):
    """``player`` rolled ``faces``; ``moves`` are the L, C and R chip moves, in die order."""

    seat: int
    player: str
    faces: tuple[str, ...]
    moves: tuple[ChipMove, ...]
    chips: tuple[int, ...]
    pot: int


@dataclass(frozen=True)
class DecisionNeeded(Event):
    """Wild: ``player`` must name whom to take ``take`` chips from, among ``eligible`` seats."""

    seat: int
    player: str
    take: int
    eligible: tuple[int, ...]


@dataclass(frozen=True)
class ChipsTaken(Event):
    """Wild: one W per chip taken from ``victims`` (seats, one entry per chip)."""

    seat: int
    player: str
    victims: tuple[int, ...]
    moves: tuple[ChipMove, ...]
    chips: tuple[int, ...]
    pot: int
    chosen: bool  # False when the engine applied the only legal choice itself


@dataclass(frozen=True)
class WildsWasted(Event):
    """Wild: no other player holds a chip, so the W faces do nothing."""

    seat: int
    player: str
    wilds: int


@dataclass(frozen=True)
class PotTaken(Event):
    """Wild: three W: ``player`` takes the whole pot (``chips`` chips) and play goes on."""

    seat: int
    player: str
    chips: int


@dataclass(frozen=True)
class GameWon(Event):
    """``player`` wins the game and the pot of ``pot`` chips; ``reason`` says how."""

    seat: int
    player: str
    pot: int
    chips: tuple[int, ...]
    reason: str  # "last-holder", "last-chip" or "three-wilds"


@dataclass(frozen=True)
class TurnUndone(Event):
    """The last turn (``player``'s roll of ``faces``) was taken back."""

    seat: int
    player: str
    faces: tuple[str, ...]


@dataclass(frozen=True)
class RollOffStarted(Event):
    """Who goes first: ``players`` each roll three dice; ``round`` counts tie-breaks from 1."""

    seats: tuple[int, ...]
    players: tuple[str, ...]
    round: int


@dataclass(frozen=True)
class RollOffRolled(Event):
    seat: int
    player: str
    faces: tuple[str, ...]
    score: int


@dataclass(frozen=True)
class RollOffWon(Event):
    seat: int
    player: str
    score: int


@dataclass(frozen=True)
class SeriesTally(Event):
    """After a game of a series: ``wins`` by seat, ``games`` played so far."""

    wins: tuple[int, ...]
    games: int
    winner_seat: int
    winner: str


@dataclass(frozen=True)
class SeriesWon(Event):
    seat: int
    player: str
    wins: tuple[int, ...]
    games: int


_EVENT_TYPES = (
    GameStarted,
    TurnStarted,
    PlayerSkipped,
    RollResolved,
    DecisionNeeded,
    ChipsTaken,
    WildsWasted,
    PotTaken,
    GameWon,
    TurnUndone,
    RollOffStarted,
    RollOffRolled,
    RollOffWon,
    SeriesTally,
    SeriesWon,
)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


_KIND_OF = {cls: _snake(cls.__name__) for cls in _EVENT_TYPES}
_TYPE_OF = {kind: cls for cls, kind in _KIND_OF.items()}


def event_from_dict(data: dict) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output; unknown kinds are refused by name."""
    try:
        cls = _TYPE_OF[data["event"]]
    except (KeyError, TypeError):
        raise UserError(f"not a game event: {data!r}") from None
    values = {}
    for f in fields(cls):
        if f.name not in data:
            raise UserError(f"{data['event']} event has no {f.name!r}")
        value = data[f.name]
        if f.name == "moves":
            value = tuple(ChipMove(face, giver, receiver) for face, giver, receiver in value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)
