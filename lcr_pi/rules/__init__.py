"""The rules of Left Center Right: pure code over immutable state, no I/O.

>>> from lcr_pi.rules import Game, GameConfig
>>> game = Game(GameConfig.create(["Ann", "Bob", "Cy"]))
>>> [e.kind for e in game.roll("C C C")]
['roll_resolved', 'turn_started']
"""

from lcr_pi.rules.config import MAX_DICE, VARIANTS, GameConfig, parse_variant
from lcr_pi.rules.engine import GameState, PendingWild, Step, choose_victims, roll, victim_choices
from lcr_pi.rules.events import ChipMove, Event, event_from_dict
from lcr_pi.rules.faces import Face, parse_face, parse_faces
from lcr_pi.rules.game import Game
from lcr_pi.rules.rolloff import RollOff, roll_off_score
from lcr_pi.rules.series import Series, SeriesRules

__all__ = [
    "MAX_DICE",
    "VARIANTS",
    "ChipMove",
    "Event",
    "Face",
    "Game",
    "GameConfig",
    "GameState",
    "PendingWild",
    "RollOff",
    "Series",
    "SeriesRules",
    "Step",
    "choose_victims",
    "event_from_dict",
    "parse_face",
    "parse_faces",
    "parse_variant",
    "roll",
    "roll_off_score",
    "victim_choices",
]
