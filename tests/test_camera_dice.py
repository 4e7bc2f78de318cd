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


class KindTellingReader:
    """A reader double for a Wild game: what it reads depends on the kind of dice it is told, as the
    real reader's does (one pip is "1" read as ordinary dice, "dot" read as Wild dice)."""

    def __init__(self, rolls):
        self.rolls = list(rolls)  # per frame: {kind told: (faces, sure flags)}
        self.told = []

    def read(self, frame, *, dice_kind="auto"):
        self.told.append(dice_kind)
        by_kind = self.rolls[int(frame[0, 0, 0])]
        faces, sure = by_kind.get(dice_kind) or by_kind["pip-or-wild"]
        dice = [die(f, 0.99 if s else 0.6, sure=s, x=20 * i) for i, (f, s) in enumerate(zip(faces, sure))]
        kind = "pip" if all(f in "123456" for f in faces) else "wild"
        return Reading(tuple(dice), kind=kind, **verdict_for(dice, [i for i, s in enumerate(sure) if not s], []))


def frame_no(n):
    return np.full((8, 8, 3), n, np.uint8)


def wild_referee(wild_pip=1):
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild", wild_pip=wild_pip))
    ref.start()
    return ref


def test_a_wild_game_with_ordinary_dice_reads_them_as_ordinary_dice_and_a_one_as_w():
    from lcr_pi.camera_dice import WildGameDice

    reader = KindTellingReader([
        {"pip-or-wild": (("4", "1", "6"), (True, True, True))},
        {"pip-or-wild": (("1", "1", "1"), (True, True, True)), "wild": (("dot", "dot", "dot"), (True, True, True))},
    ])
    read = WildGameDice(reader.read, wild_pip=1)
    first = read(frame_no(0))
    assert first.faces == ("4", "1", "6") and read.kind == "pip" and reader.told == ["pip-or-wild"]
    # Ones alone do not show the kind of dice; the night's dice were shown ordinary: a one is a W.
    ones = read(frame_no(1))
    assert ones.faces == ("1", "1", "1") and ones.verdict == "clear" and reader.told[1:] == ["pip-or-wild"]
    from lcr_pi.rules.faces import Face, parse_faces

    assert parse_faces(first.faces, wild_pip=1) == (Face.LEFT, Face.WILD, Face.RIGHT)
    assert parse_faces(ones.faces, wild_pip=1) == (Face.WILD,) * 3  # three W: the whole pot


def test_a_wild_game_with_wild_dice_reads_a_lone_dot_as_a_dot_once_the_dice_showed_they_are_wild():
    from lcr_pi.camera_dice import WildGameDice

    reader = KindTellingReader([
        {"pip-or-wild": (("L", "W", "dot"), (True, True, True))},
        {"pip-or-wild": (("1", "1"), (True, True)), "wild": (("dot", "dot"), (True, True))},
    ])
    read = WildGameDice(reader.read, wild_pip=1)
    assert read(frame_no(0)).faces == ("L", "W", "dot") and read.kind == "wild"
    dots = read(frame_no(1))
    assert dots.faces == ("dot", "dot") and dots.verdict == "clear"
    assert reader.told == ["pip-or-wild", "pip-or-wild", "wild"]  # read again as the night's dice


def test_ones_before_the_dice_showed_their_kind_are_asked_about_not_announced():
    from lcr_pi.camera_dice import WildGameDice

    reader = KindTellingReader([{"pip-or-wild": (("1", "1", "1"), (True, True, True))}])
    read = WildGameDice(reader.read, wild_pip=1)
    reading = read(frame_no(0))
    assert read.kind is None and reading.verdict == "unsure" and reading.unsure_dice == (0, 1, 2)
    assert all(not d.sure and d.could_be == ("1", "dot") for d in reading.dice)
    ref = wild_referee()
    out = said(ref.on_roll(observe(reading, frame_no(0))))
    assert "I do not know yet whether you play with ordinary dice, where a one is a W, or with Wild dice" in out
    assert "With Wild dice, roll again; with ordinary dice, press confirm." in out
    assert ref.phase == "confirm_read" and ref.game.state.rolls == 0  # a W or a dot: not settled by its move
    # In a roll-off a one and a dot both score one: taken without asking.
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild", wild_pip=1), first_player="roll-off")
    ref.start()
    out = said(ref.on_roll(observe(reading, frame_no(0))))
    assert ref.roll_off.scores == ((0, 3),) and "Ann" in out and "please roll again" not in out
    # A die doubted for another reason as well is not taken.
    doubted = Reading((die("1", 0.99), die("1", 0.99, x=20), die("1", 0.5, sure=False, x=40)), "unsure", (2,))
    reading = WildGameDice(lambda frame, dice_kind: doubted, wild_pip=1)(frame_no(0))
    assert [d.could_be for d in reading.dice] == [("1", "dot"), ("1", "dot"), ()]
    ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"], variant="wild", wild_pip=1), first_player="roll-off")
    ref.start()
    assert "please roll again" in said(ref.on_roll(observe(reading, frame_no(0)))) and ref.roll_off.scores == ()
    # A blurred frame (the dice still rolling) stays blurred: the referee waits for the next.
    blurred = Reading((die("4", 0.99), die("1", 0.99, x=20)), "obstructed", (0, 1), "The picture is blurred")
    read = WildGameDice(lambda frame, dice_kind: blurred, wild_pip=1)
    assert read(frame_no(0)) is blurred and read.kind is None
    # With wild_pip 2 a one is a dot on either kind of dice: nothing to ask.
    read = WildGameDice(KindTellingReader([{"pip-or-wild": (("1", "1", "1"), (True, True, True))}]).read, wild_pip=2)
    assert read(frame_no(0)).verdict == "clear"


def test_the_kind_is_learnt_only_from_sure_flat_dice_that_agree():
    from lcr_pi.camera_dice import kind_shown

    def reading(*dice):
        return Reading(tuple(dice), "clear")

    assert kind_shown(reading(die("4", 0.99), die("1", 0.99))) == "pip"
    assert kind_shown(reading(die("C", 0.99), die("dot", 0.99))) == "wild"
    assert kind_shown(reading(die("4", 0.6, sure=False), die("1", 0.99))) is None  # a doubted 4 shows nothing
    assert kind_shown(reading(die("L", 0.6, sure=False, cocked=True))) is None
    assert kind_shown(reading(die("4", 0.99), die("L", 0.99))) is None  # dice that disagree teach nothing
    assert kind_shown(reading(die("1", 0.99), die("dot", 0.99))) is None


def test_a_wild_night_never_announces_ones_as_a_kind_of_dice_no_roll_has_shown():
    """Whatever the rolls of a Wild night (ordinary or Wild dice, read surely or not), a clear roll of
    ones and dots is only announced once an earlier roll of that night has shown the same kind of
    dice surely, and then named as that kind's face: "1" (a W) for ordinary dice, "dot" for Wild ones."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from lcr_pi.camera_dice import WildGameDice

    def roll(kind):
        faces = st.sampled_from(("1", "2", "3", "4", "5", "6") if kind == "pip" else ("L", "C", "R", "W", "dot", "dot"))
        return st.lists(st.tuples(faces, st.booleans()), min_size=1, max_size=3)

    @settings(max_examples=200, deadline=None)
    @given(st.sampled_from(("pip", "wild")).flatmap(lambda kind: st.tuples(st.just(kind), st.lists(roll(kind), max_size=8))))
    def check(night):
        kind, rolls = night
        table = []
        for dice in rolls:
            faces = tuple(f for f, _ in dice)
            sure = tuple(s for _, s in dice)
            ones = tuple("1" for _ in faces)
            as_read = faces if kind == "pip" else tuple("1" if f == "dot" else f for f in faces)
            table.append({"pip-or-wild": (as_read if any(f not in ("1", "dot") for f in faces) else ones, sure),
                          "pip": (tuple("1" if f == "dot" else f for f in faces), sure),
                          "wild": (tuple("dot" if f == "1" else f for f in faces), sure)})
        reader = KindTellingReader(table)
        read = WildGameDice(reader.read, wild_pip=1)
        shown = None
        for n, dice in enumerate(rolls):
            reading = read(frame_no(n))
            all_ones = all(f in ("1", "dot") for f, _ in dice)
            if all_ones and reading.verdict == "clear":
                assert shown == kind and reading.faces == (("1",) if kind == "pip" else ("dot",)) * len(dice)
            if any(s and f not in ("1", "dot") for f, s in dice):
                shown = kind

    check()
