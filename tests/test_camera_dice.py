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


def test_a_pip_die_that_is_a_2_or_a_3_is_called_as_a_dot_without_asking():
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
    ref.start()
    dice = [DieReading("2", 0.6, (0, 0, 10, 10), (), (5, 5), "left", False, could_be=("2", "3")),
            DieReading("6", 0.99, (20, 0, 30, 10), (), (25, 5), "middle", True, could_be=("6",)),
            DieReading("5", 0.98, (40, 0, 50, 10), (), (45, 5), "right", True, could_be=("5",))]
    obs = observe(Reading(tuple(dice), **verdict_for(dice, [0], [])), np.zeros((8, 8, 3), np.uint8))
    assert obs.could_be == (("2", "3"), ("6",), ("5",))
    out = ref.on_roll(obs)
    assert "press confirm" not in said(out) and ref.game.state.chips == (1, 3, 4)  # R to Cy, C to the pot
    # The same doubt between a 3 and a 4 (keep or pass left) is asked.
    dice[0] = DieReading("3", 0.6, (0, 0, 10, 10), (), (5, 5), "left", False, could_be=("3", "4"))
    out = ref.on_roll(observe(Reading(tuple(dice), **verdict_for(dice, [0], [])), np.zeros((8, 8, 3), np.uint8)))
    assert "press confirm" in said(out) and ref.game.state.chips == (1, 3, 4)
