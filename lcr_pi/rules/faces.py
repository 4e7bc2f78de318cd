"""Die faces and how a read or typed face maps onto a rule.

LCR dice carry L, C, R and three dot faces (Wild dice swap one dot for a W). Ordinary pip dice stand in
for them: 1-3 count as a dot, 4 as L, 5 as C and 6 as R. With Wild rules on ordinary dice one pip value
(configurable) counts as W instead.

>>> parse_face("L")
<Face.LEFT: 'L'>
>>> parse_face("4")
<Face.LEFT: 'L'>
>>> parse_face("dot"), parse_face("."), parse_face(2)
(<Face.DOT: 'dot'>, <Face.DOT: 'dot'>, <Face.DOT: 'dot'>)
>>> parse_face("1", wild_pip=1)
<Face.WILD: 'W'>
>>> parse_faces("L . C")
(<Face.LEFT: 'L'>, <Face.DOT: 'dot'>, <Face.CENTER: 'C'>)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from lcr_pi.errors import UserError


class Face(enum.Enum):
    """What a die's top face tells the roller to do."""

    LEFT = "L"
    CENTER = "C"
    RIGHT = "R"
    DOT = "dot"
    WILD = "W"

    def __str__(self) -> str:
        return self.value


#: Ordinary dice: pip value -> LCR face.
PIP_TO_FACE: dict[int, Face] = {1: Face.DOT, 2: Face.DOT, 3: Face.DOT, 4: Face.LEFT, 5: Face.CENTER, 6: Face.RIGHT}

_NAMES: dict[str, Face] = {
    "l": Face.LEFT,
    "left": Face.LEFT,
    "c": Face.CENTER,
    "center": Face.CENTER,
    "centre": Face.CENTER,
    "r": Face.RIGHT,
    "right": Face.RIGHT,
    "dot": Face.DOT,
    ".": Face.DOT,
    "•": Face.DOT,
    "*": Face.WILD,
    "w": Face.WILD,
    "wild": Face.WILD,
}

#: The spellings accepted for a face, for error messages and help texts.
ACCEPTED_FACE_NAMES = "L, C, R, dot (or .), W, or a pip value 1-6"
# A pip die's one and an LCR die's dot: one face, named by the kind of dice (the reader cannot tell
# them apart; only with Wild rules on ordinary dice, where a one may be a W, do they move differently).
ONE_PIP = ("1", "dot")


def parse_face(token: str | int | Face, *, wild_pip: int | None = None) -> Face:
    """Map one reported face (an LCR face name or an ordinary die's pip value) to a :class:`Face`.

    ``wild_pip`` is the pip value that counts as W when playing Wild rules with ordinary dice.
    Unknown names raise :class:`~lcr_pi.errors.UserError` naming the token.
    """
    if isinstance(token, Face):
        return token
    if isinstance(token, bool):  # bool is an int subclass; True is not a die face
        raise UserError(f"unknown face {token!r}: expected {ACCEPTED_FACE_NAMES}")
    if isinstance(token, int):
        text = str(token)
    elif isinstance(token, str):
        text = token.strip()
    else:
        raise UserError(f"unknown face {token!r}: expected {ACCEPTED_FACE_NAMES}")
    if text.isascii() and text.isdigit():  # not '²', which isdigit() too but int() refuses
        pips = int(text)
        if pips not in PIP_TO_FACE:
            raise UserError(f"unknown face {text!r}: a die shows 1 to 6 pips")
        if wild_pip is not None and pips == wild_pip:
            return Face.WILD
        return PIP_TO_FACE[pips]
    face = _NAMES.get(text.lower())
    if face is None:
        raise UserError(f"unknown face {text!r}: expected {ACCEPTED_FACE_NAMES}")
    return face


def roll_tokens(roll: str | Iterable[str | int | Face]) -> tuple[str, ...]:
    """A roll's faces as reported, one string per die, from ``"L . C"`` / ``"4,1,6"`` or a sequence.

    >>> roll_tokens("4,1 6"), roll_tokens([Face.LEFT, 3, "dot"])
    (('4', '1', '6'), ('L', '3', 'dot'))
    """
    if isinstance(roll, str):
        return tuple(roll.replace(",", " ").split())
    return tuple(str(getattr(token, "value", token)) for token in roll)


def parse_faces(roll: str | Iterable[str | int | Face], *, wild_pip: int | None = None) -> tuple[Face, ...]:
    """Parse a whole roll: a string such as ``"L . C"`` / ``"4,1,6"`` or a sequence of faces."""
    return tuple(parse_face(t, wild_pip=wild_pip) for t in roll_tokens(roll))


def pip_value(token: str | int) -> int | None:
    """The pip value of an ordinary-die face, or None for an LCR face (used by the roll-off).

    >>> pip_value("5"), pip_value(3), pip_value("L")
    (5, 3, None)
    """
    text = str(token).strip()
    if text.isascii() and text.isdigit() and int(text) in PIP_TO_FACE:
        return int(text)
    return None
