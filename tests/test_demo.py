"""The newcomer's first command: `lcr-pi demo` plays a whole game and says so."""

import re

import pytest

from lcr_pi.cli import main


@pytest.mark.parametrize("variant", ["classic", "wild", "wild-win", "last-chip"])
def test_demo_plays_a_whole_game(capsys, tmp_path, variant):
    # --keep: the demo keeps its saved game for the player to look at; a test leaves none in /tmp.
    assert main(["demo", "--typed", "--speech", "print", "--seed", "7", "--variant", variant, "--players", "5",
                 "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "A new game of LCR: Player 1, Player 2, Player 3, Player 4 and Player 5" in out
    assert out.count(" wins ") >= 1 and "Game over after" in out
    assert "LEDs [Player 1 ● ][Player 2 ○ ]" in out  # the lights, drawn from the mock pins


def test_demo_is_repeatable_with_a_seed(capsys, tmp_path):
    main(["demo", "--typed", "--speech", "print", "--seed", "11", "--keep", str(tmp_path / "a")])
    first = re.sub(r"in \d+ s", "", capsys.readouterr().out.replace(str(tmp_path / "a"), "DIR"))
    main(["demo", "--typed", "--speech", "print", "--seed", "11", "--keep", str(tmp_path / "b")])
    assert re.sub(r"in \d+ s", "", capsys.readouterr().out.replace(str(tmp_path / "b"), "DIR")) == first


@pytest.mark.parametrize(
    "argv, message",
    [
        (["demo", "--players", "Ann,Bob"], "at least 3 players"),
        (["demo", "--variant", "turbo"], "unknown variant 'turbo'"),
        (["demo", "--chips", "0"], "starting chips"),
    ],
)
def test_demo_bad_arguments_get_one_clear_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_table_larger_than_the_mock_board_is_drawn_with_seats_past_it_without_an_led(capsys, tmp_path):
    # Found by an audit (2026-12-03): 26 or more players failed with "bad pin 28 for the centre LED".
    players = ",".join(f"P{i}" for i in range(30))
    assert main(["demo", "--typed", "--speech", "print", "--seed", "3", "--players", players,
                 "--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[P24 " in out and "[P29 - ]" in out and "Game over" in out


def test_the_demos_score_counts_a_roll_the_referee_plays_without_asking():
    # An unsure read whose doubt is only between faces that move chips alike (a 2 or a 3 of ordinary
    # dice) is played without a press: it was counted as neither agreed, confirmed nor typed, so the
    # demo's summary did not add up to the rolls played (found when another classifier settled more).
    import queue
    from types import SimpleNamespace

    import numpy as np

    from lcr_pi.camera_dice import observe
    from lcr_pi.demo_table import RenderedRolls
    from lcr_pi.referee import Referee
    from lcr_pi.rules import GameConfig

    referee = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
    referee.start()
    rolls = RenderedRolls(referee, None, np.random.default_rng(1), wild=False, actions=queue.Queue(),
                          ordinary_dice=True)

    def die(face, could_be=()):
        return SimpleNamespace(face=face, confidence=0.7 if could_be else 1.0, sure=not could_be, could_be=could_be)

    def read(faces, doubts):
        dice = tuple(die(f, doubts.get(i, ())) for i, f in enumerate(faces))
        return SimpleNamespace(faces=faces, verdict="unsure", message="", dice=dice, unsure_dice=tuple(doubts))

    frame = np.zeros((4, 4, 3), np.uint8)
    for thrown, faces, doubts in ((("3", "5", "4"), ("2", "5", "4"), {0: ("2", "3")}),   # right: a keep either way
                                  (("4", "5", "4"), ("2", "5", "4"), {0: ("2", "3")}),   # wrong: an L kept
                                  (("3", "5", "4"), ("3", "5", "4"), {0: ("3", "4")})):  # asked: keep or L
        rolls.thrown = thrown
        reading = read(faces, doubts)
        rolls._score(reading, observe(reading, frame))
    assert rolls.score.unsure == 3 and rolls.score.settled == 1
    assert rolls.score.wrong == [(("4", "5", "4"), ("dot", "5", "4"))]
