"""A reader's reading as the referee's input: which dice it doubts, and what the referee makes of them."""

import numpy as np

from lcr_pi.camera_dice import observe
from lcr_pi.referee import Referee, said
from lcr_pi.rules import GameConfig
from lcr_pi.vision.reader import DieReading, Reading, verdict_for


def die(face, confidence, sure=True, cocked=False, x=0.0):
    return DieReading(face, confidence, (x, 0, x + 10, 10), (), (x + 5, 5), "centre", sure, cocked)


def test_observe_passes_on_the_doubted_dice_least_sure_first():
    dice = [die("L", 0.99, x=0), die("dot", 0.55, sure=False, x=20), die("C", 0.98, x=40),
            die("dot", 0.31, sure=False, x=60)]
    reading = Reading(tuple(dice), **verdict_for(dice, [1, 3], []))
    frame = np.zeros((8, 8, 3), np.uint8)
    obs = observe(reading, frame)
    assert obs.faces == ("L", "dot", "C", "dot") and obs.verdict == "unsure"
    assert obs.doubtful == (3, 1)  # 0.31 before 0.55; the sure dice are not doubted
    assert obs.evidence[1] is reading
    leaning = [die("R", 0.6, sure=False, cocked=True), die("L", 0.99, x=20)]
    obs = observe(Reading(tuple(leaning), **verdict_for(leaning, [], [0])), frame)
    assert obs.verdict == "cocked" and obs.doubtful == (0,)
    sure = [die("C", 0.97)]
    assert observe(Reading(tuple(sure), **verdict_for(sure, [], [])), frame).doubtful == ()


def test_a_side_face_read_as_a_fourth_die_leaves_the_three_rolled_to_confirm():
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
    ref.start()
    dice = [die("L", 0.99, x=0), die("C", 0.97, x=20), die("R", 0.95, x=40), die("dot", 0.4, sure=False, x=60)]
    obs = observe(Reading(tuple(dice), **verdict_for(dice, [3], [])), np.zeros((8, 8, 3), np.uint8))
    out = ref.on_roll(obs)
    assert "if the dice show L, C, R, press confirm" in said(out)
    ref.on_action("confirm")
    assert ref.game.state.chips == (0, 4, 4)
