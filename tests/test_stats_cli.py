"""``lcr-pi simulate`` and ``lcr-pi odds``: JSON output and one-line refusals of bad arguments."""

from __future__ import annotations

import json

import pytest

from lcr_pi.cli import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_simulate_json(capsys):
    status, out, err = run(capsys, "simulate", "--players", "4", "--games", "2000", "--seed", "9", "--json")
    assert status == 0 and err == ""
    report = json.loads(out)
    for key in ("win_rate", "mean_rolls", "rolls_percentiles", "games", "seed", "variant", "players", "chips",
                "elapsed_seconds"):
        assert key in report
    assert len(report["win_rate"]) == 4 and sum(report["win_rate"]) == pytest.approx(1)
    assert set(report["rolls_percentiles"]) == {"p5", "p25", "p50", "p75", "p95", "max"}
    assert (report["games"], report["seed"], report["variant"]) == (2000, 9, "classic")
    # The same seed gives the same games.
    again = json.loads(run(capsys, "simulate", "--players", "4", "--games", "2000", "--seed", "9", "--json")[1])
    assert again["win_rate"] == report["win_rate"] and again["mean_rolls"] == report["mean_rolls"]


def test_simulate_table(capsys):
    status, out, _ = run(capsys, "simulate", "--players", "3", "--games", "500", "--variant", "wild+last-chip")
    assert status == 0
    assert "wild+last-chip" in out and "rolls per game: mean" in out and "p95" in out


def test_odds_json_is_exact_for_three_players(capsys):
    status, out, _ = run(capsys, "odds", "--players", "3", "--json")
    report = json.loads(out)
    assert status == 0 and report["exact"] is True
    assert round(report["win_probability"][0], 4) == 0.3068
    assert sum(report["win_probability"]) == pytest.approx(1)


def test_odds_says_when_it_estimates(capsys):
    status, out, _ = run(capsys, "odds", "--players", "9", "--games", "2000", "--seed", "1")
    assert status == 0 and "estimated, +/-" in out
    status, out, err = run(capsys, "odds", "--players", "9", "--exact-only")
    assert status == 2 and "too many to solve" in err


@pytest.mark.parametrize("command", ["simulate", "odds"])
@pytest.mark.parametrize(
    "args, message",
    [(["--players", "2"], "at least 3 players"),
     (["--players", "4", "--chips", "0"], "starting chips"),
     (["--players", "4", "--variant", "bogus"], "unknown variant 'bogus'"),
     (["--players", "4", "--games", "0"], "--games must be")],
)
def test_bad_arguments_get_one_clear_line(capsys, command, args, message):
    status, out, err = run(capsys, command, *args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith(f"lcr-pi {command}: ")
