"""How a table plays: players in seat order, starting chips and the chosen variant.

>>> cfg = GameConfig.create(["Ann", "Bob", "Cy"])
>>> cfg.players, cfg.starting_chips, cfg.variant_name
(('Ann', 'Bob', 'Cy'), 3, 'classic')
>>> GameConfig.create(["Ann", "Bob", "Cy"], variant="wild-win", starting_chips=4).variant_name
'wild-win'
>>> GameConfig.create(["Ann", "Bob"])
Traceback (most recent call last):
...
lcr_pi.errors.UserError: LCR needs at least 3 players, got 2 (Ann, Bob)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lcr_pi.errors import UserError

#: At most this many dice are rolled, whatever a player holds.
MAX_DICE = 3

ThreeWilds = Literal["pot", "win"]

#: Variant names accepted by :meth:`GameConfig.create` and the command line.
#: Flags combine with "+", e.g. ``wild+last-chip``.
VARIANTS: dict[str, str] = {
    "classic": "the box rules: the last player holding chips wins the pot",
    "wild": "LCR Wild: W faces take chips from other players; three W take the pot and play goes on",
    "wild-win": "LCR Wild, house rule: three W win the game at once",
    "last-chip": "last chip wins: play goes on until a C puts the last chip in the pot; that roller wins",
}


@dataclass(frozen=True)
class GameConfig:
    """Everything that decides how chips move. Immutable; build it with :meth:`create`."""

    players: tuple[str, ...]
    starting_chips: int = 3
    wild: bool = False
    three_wilds: ThreeWilds = "pot"
    #: With ordinary dice in a Wild game, this pip value counts as W (a dot face on real Wild dice).
    wild_pip: int = 1
    last_chip_wins: bool = False
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def create(
        cls,
        players,
        *,
        starting_chips: int = 3,
        variant: str = "classic",
        wild_pip: int = 1,
    ) -> "GameConfig":
        """Validate and build a config; every refusal names the problem."""
        names = tuple(_clean_name(p, i) for i, p in enumerate(players))
        if len(names) < 3:
            listed = ", ".join(names) if names else "none"
            raise UserError(f"LCR needs at least 3 players, got {len(names)} ({listed})")
        seen: dict[str, str] = {}
        for name in names:
            key = name.casefold()
            if key in seen:
                raise UserError(f"two players are called {name!r}: every player needs a different name")
            seen[key] = name
        if isinstance(starting_chips, bool) or not isinstance(starting_chips, int) or starting_chips < 1:
            raise UserError(f"starting chips must be a whole number of at least 1, got {starting_chips!r}")
        if isinstance(wild_pip, bool) or wild_pip not in (1, 2, 3):
            raise UserError(
                f"wild pip must be 1, 2 or 3 (a dot face, so L, C and R keep 4, 5 and 6), got {wild_pip!r}"
            )
        flags = parse_variant(variant)
        return cls(
            players=names,
            starting_chips=starting_chips,
            wild="wild" in flags or "wild-win" in flags,
            three_wilds="win" if "wild-win" in flags else "pot",
            wild_pip=wild_pip,
            last_chip_wins="last-chip" in flags,
        )

    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def total_chips(self) -> int:
        """Chips in the game: every player's plus the pot, constant for the whole game."""
        return self.n_players * self.starting_chips

    @property
    def variant_name(self) -> str:
        """The variant as :meth:`create` accepts it, e.g. ``'wild+last-chip'``."""
        flags = []
        if self.wild:
            flags.append("wild-win" if self.three_wilds == "win" else "wild")
        if self.last_chip_wins:
            flags.append("last-chip")
        return "+".join(flags) or "classic"

    @property
    def effective_wild_pip(self) -> int | None:
        """The pip value read as W, or None when the game has no Wild faces."""
        return self.wild_pip if self.wild else None

    def seat_of(self, name: str) -> int:
        """The seat index of a player by name (case-insensitive); unknown names are refused."""
        for seat, player in enumerate(self.players):
            if player.casefold() == str(name).strip().casefold():
                return seat
        raise UserError(f"no player called {name!r} at this table ({', '.join(self.players)})")

    def left_of(self, seat: int) -> int:
        """The left neighbour, who is also the next player (play passes to the left)."""
        return (seat + 1) % self.n_players

    def right_of(self, seat: int) -> int:
        return (seat - 1) % self.n_players

    def to_dict(self) -> dict:
        return {
            "players": list(self.players),
            "starting_chips": self.starting_chips,
            "variant": self.variant_name,
            "wild_pip": self.wild_pip,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "GameConfig":
        try:
            return cls.create(
                data["players"],
                starting_chips=data.get("starting_chips", 3),
                variant=data.get("variant", "classic"),
                wild_pip=data.get("wild_pip", 1),
            )
        except KeyError as exc:
            raise UserError(f"game config has no {exc.args[0]!r}") from None
        except TypeError:
            raise UserError("game config must be a table with 'players'") from None


def parse_variant(variant: str) -> frozenset[str]:
    """Split ``'wild+last-chip'`` into its flags, refusing unknown or conflicting ones.

    >>> sorted(parse_variant("wild+last-chip"))
    ['last-chip', 'wild']
    >>> parse_variant("classic")
    frozenset()
    """
    if not isinstance(variant, str) or not variant.strip():
        raise UserError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    flags = set()
    for part in variant.replace(",", "+").split("+"):
        name = part.strip().lower().replace("_", "-")
        if name == "lcr-wild":
            name = "wild"
        if name not in VARIANTS:
            raise UserError(
                f"unknown variant {part.strip()!r}: choose from {', '.join(VARIANTS)} (combine with '+')"
            )
        if name != "classic":
            flags.add(name)
    if {"wild", "wild-win"} <= flags:
        raise UserError("choose either 'wild' or 'wild-win', not both")
    return frozenset(flags)


def _clean_name(name, index: int) -> str:
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"player {index + 1} has no name (got {name!r})")
    return " ".join(name.split())
