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


def test_a_table_larger_than_the_mock_board_is_drawn_with_seats_past_it_without_an_led(capsys):
    # Found by an audit (2026-12-03): 26 or more players failed with "bad pin 28 for the centre LED".
    players = ",".join(f"P{i}" for i in range(30))
    assert main(["demo", "--typed", "--speech", "print", "--seed", "3", "--players", players]) == 0
    out = capsys.readouterr().out
    assert "[P24 " in out and "[P29 - ]" in out and "Game over" in out
