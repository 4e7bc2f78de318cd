"""Nothing lost: atomic saves, a log that survives a torn line, a bounded evidence ring."""

import json
import os

import pytest

from lcr_pi.errors import UserError
from lcr_pi.persist import GameStore, write_atomic


def test_atomic_write_replaces_whole_files_and_leaves_no_temporaries(tmp_path):
    path = tmp_path / "game.json"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["game.json"]


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "game.json"
    write_atomic(path, b"turn 1")

    def power_cut(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(OSError):
        write_atomic(path, b"turn 2")
    assert path.read_bytes() == b"turn 1"
    assert os.listdir(tmp_path) == ["game.json"]


def test_store_saves_loads_and_names_a_damaged_file(tmp_path):
    store = GameStore(tmp_path / "state")
    assert store.load() is None
    store.save({"a": 1})
    assert store.load() == {"a": 1}
    store.state_path.write_text('{"a": ')
    with pytest.raises(UserError, match="the saved game .*game.json is damaged"):
        store.load()
    store.discard()
    assert store.load() is None


def test_log_skips_a_line_torn_by_a_power_cut(tmp_path):
    store = GameStore(tmp_path)
    store.log({"turn": 1})
    with open(store.log_path, "a") as f:
        f.write('{"turn": 2, "ro')
    store.log({"turn": 3})
    assert store.read_log() == [{"turn": 1}, {"turn": 3}]


def test_evidence_ring_keeps_the_newest(tmp_path):
    store = GameStore(tmp_path, evidence_frames=3)
    for i in range(5):
        store.keep_evidence(f"{i:04d}.jpg", b"jpeg")
    assert sorted(p.name for p in store.evidence_dir.iterdir()) == ["0002.jpg", "0003.jpg", "0004.jpg"]


def test_read_only_folder_is_named(tmp_path):
    if os.geteuid() == 0:
        target = "/proc/lcr-pi-state"  # root can write anywhere else; /proc refuses everyone
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        target = ro / "state"
    with pytest.raises(UserError, match="cannot create the state folder"):
        GameStore(target)


@pytest.mark.parametrize("content", [
    bytes(range(256)) * 8,                       # random bytes: not text
    b"null", b"[1, 2]",                          # JSON, but no table
    b'{"format": "lcr-pi-table", "version": 1, "config": 5}',
])
def test_a_damaged_save_is_named_and_kept_and_a_new_game_starts(tmp_path, content):
    # Found by an audit (2026-12-03): a save that was not text, or held a value of the wrong type,
    # crashed `lcr-pi run` at every start (and systemd gave up), instead of being set aside.
    from lcr_pi.night import resume_or_new
    from lcr_pi.settings import Settings

    store = GameStore(tmp_path / "state")
    store.state_path.write_bytes(content)
    problems = []
    referee = resume_or_new(Settings(), store, problems)
    assert referee.game is None and len(problems) == 1, problems
    (kept,) = (tmp_path / "state").glob("game-set-aside-*.json")
    assert str(kept) in problems[0] and "Starting a new game" in problems[0] and "game.json" in problems[0]
    assert kept.read_bytes() == content and not store.state_path.exists()


def test_a_save_with_values_of_the_wrong_type_is_refused_with_the_file_named(tmp_path):
    import json

    from lcr_pi.night import resume_or_new
    from lcr_pi.referee import Referee, RollObservation
    from lcr_pi.settings import Settings

    settings = Settings()
    ref = Referee(settings.game_config())
    ref.start()
    ref.on_roll(RollObservation(("L", "dot", "C")))
    good = ref.snapshot()
    store = GameStore(tmp_path / "state")
    for damage in (lambda s: s.update(turn_label="x"), lambda s: s.update(turn_label=[1]),
                   lambda s: s["game"].update(actions=5), lambda s: s["game"].update(redo=7),
                   lambda s: s["game"].update(events=3), lambda s: s["config"].update(starting_chips="many")):
        snap = json.loads(json.dumps(good))
        damage(snap)
        store.save(snap)
        problems = []
        assert resume_or_new(settings, store, problems).game is None, snap
        assert str(store.state_path) in problems[0] and "It was kept as" in problems[0], problems
    store.save(good)
    problems = []
    assert resume_or_new(settings, store, problems).game.state.pot == 1 and problems == []
    assert len(list((tmp_path / "state").glob("game-set-aside-*.json"))) == 6  # none written over


def test_what_a_power_cut_mid_write_leaves_is_removed_at_the_next_start(tmp_path):
    # A process killed between writing the temporary file and renaming it (os._exit at the fsync:
    # no cleanup runs, as with a yanked plug) leaves ``.game.json.*.tmp`` and, for a roll's photo,
    # ``evidence/.000007.jpg.*.tmp``; found by an audit: nothing ever removed them.
    import subprocess
    import sys
    from pathlib import Path

    import lcr_pi

    env = {**os.environ, "PYTHONPATH": str(Path(lcr_pi.__file__).resolve().parent.parent)}
    crash = ("import os, sys; from lcr_pi.persist import write_atomic; from pathlib import Path; "
             "os.fsync = lambda fd: os._exit(9); write_atomic(Path(sys.argv[1]), b'half a save')")
    for path in (tmp_path / "game.json", tmp_path / "evidence" / "000007.jpg"):
        assert subprocess.run([sys.executable, "-c", crash, str(path)], env=env).returncode == 9
    (tmp_path / "setup.json").write_text("{}")
    (tmp_path / ".lgd-nfy0").write_text("")  # lgpio's pipe in the service's working folder: not ours
    assert len(list(tmp_path.glob(".game.json.*.tmp"))) == 1
    assert len(list((tmp_path / "evidence").glob(".*.tmp"))) == 1
    GameStore(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lgd-nfy0", "evidence", "setup.json"]
    assert list((tmp_path / "evidence").iterdir()) == []


# -- the log's rotation: a card is not filled by it over the months ------------------------------------


def _line(n):
    return {"pad": "x" * (31 - len(str(n))), "turn": n}  # 50 bytes a line with its newline


def _log_names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_the_log_is_rotated_at_its_bound_and_the_oldest_file_dropped(tmp_path):
    store = GameStore(tmp_path, log_max_bytes=200, log_keep=2)
    assert (GameStore(tmp_path).log_max_bytes, GameStore(tmp_path).log_keep) == (2 * 1024 * 1024, 4)  # ~20 nights
    for n in range(4):
        store.log(_line(n))
    assert store.log_path.stat().st_size == 200 and _log_names(tmp_path) == ["game-log.jsonl"]
    store.log(_line(4))  # it would pass 200 bytes: a new file
    assert _log_names(tmp_path) == ["game-log.1.jsonl", "game-log.jsonl"]
    rotated = (tmp_path / "game-log.1.jsonl").read_text().splitlines()
    assert [json.loads(line)["turn"] for line in rotated] == [0, 1, 2, 3]
    assert [r["turn"] for r in store.read_log()] == [0, 1, 2, 3, 4]
    for n in range(5, 12):
        store.log(_line(n))
    assert _log_names(tmp_path) == ["game-log.1.jsonl", "game-log.2.jsonl", "game-log.jsonl"]
    assert [r["turn"] for r in store.read_log()] == list(range(12))
    for n in range(12, 14):
        store.log(_line(n))  # the third rotation drops the oldest four lines
    assert _log_names(tmp_path) == ["game-log.1.jsonl", "game-log.2.jsonl", "game-log.jsonl"]
    assert [r["turn"] for r in store.read_log()] == list(range(4, 14))
    assert all(p.stat().st_size <= 200 for p in tmp_path.iterdir())


def test_rotated_logs_are_read_oldest_first_with_torn_lines_skipped(tmp_path):
    store = GameStore(tmp_path, log_max_bytes=200, log_keep=3)
    store.log(_line(0))
    with open(store.log_path, "a") as f:
        f.write('{"turn": 1, "ro')  # a power cut mid-line
    for n in range(2, 9):
        store.log(_line(n))
    assert len(store.log_files()) == 3 and store.log_files()[-1] == store.log_path
    assert [r["turn"] for r in store.read_log()] == [0, 2, 3, 4, 5, 6, 7, 8]
    assert [r["turn"] for r in GameStore(tmp_path).read_log()] == [0, 2, 3, 4, 5, 6, 7, 8]  # after a restart


class PowerCut(BaseException):
    """The plug pulled: nothing after it runs (not an error the program could catch)."""


@pytest.mark.parametrize("renames_done", [0, 1, 2])  # of the three the rotation makes
def test_a_power_cut_mid_rotation_loses_only_the_file_being_dropped(tmp_path, monkeypatch, renames_done):
    store = GameStore(tmp_path, log_max_bytes=200, log_keep=3)
    for n in range(16):  # four full files: game-log.3 (turns 0-3) ... game-log.jsonl (12-15)
        store.log(_line(n))
    assert [p.name for p in store.log_files()] == ["game-log.3.jsonl", "game-log.2.jsonl", "game-log.1.jsonl",
                                                   "game-log.jsonl"]
    real_replace, done = os.replace, []

    def replace(src, dst):
        if len(done) == renames_done:
            raise PowerCut
        done.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(PowerCut):
        store.log(_line(16))  # this line was never written: the cut came first
    monkeypatch.setattr(os, "replace", real_replace)
    # Whatever the cut left: whole files, no other files, the lines in order, at most the oldest gone.
    kept = [r["turn"] for r in GameStore(tmp_path).read_log()]
    assert kept == list(range(4 if renames_done else 0, 16)), kept
    assert all(p.name.startswith("game-log.") and p.name.endswith(".jsonl") for p in tmp_path.iterdir())
    # After the restart the next line finishes the rotation, and drops nothing more.
    again = GameStore(tmp_path, log_max_bytes=200, log_keep=3)
    again.log(_line(16))
    assert [p.name for p in again.log_files()] == ["game-log.3.jsonl", "game-log.2.jsonl", "game-log.1.jsonl",
                                                   "game-log.jsonl"]
    assert [r["turn"] for r in again.read_log()] == list(range(4, 17))


def test_a_log_that_cannot_be_rotated_still_keeps_every_line(tmp_path, monkeypatch, caplog):
    store = GameStore(tmp_path, log_max_bytes=100, log_keep=2)
    store.log(_line(0))
    store.log(_line(1))

    def refused(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refused)
    store.log(_line(2))
    store.log(_line(3))
    assert [r["turn"] for r in store.read_log()] == [0, 1, 2, 3]
    assert "cannot rotate the game log" in caplog.text


def test_a_saved_table_of_other_players_with_nothing_in_play_is_replaced_without_a_word(tmp_path):
    # Found by a review (2026-12-04): a plug pulled between remembering players named at the table and
    # saving their new game said "the saved game had other players" at the next start, and kept a file
    # for a person to read, of a game with no roll. A game in play, or a series with games won, is still
    # set aside and said.
    from lcr_pi.night import resume_or_new
    from lcr_pi.referee import Referee, RollObservation
    from lcr_pi.rules import GameConfig, SeriesRules
    from lcr_pi.settings import parse_settings

    settings = parse_settings('[game]\nplayers = ["Ann", "Rose", "Cy"]\n', source="t")
    store = GameStore(tmp_path / "state")

    def saved(rolls, series_rules=None):
        ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]), series_rules=series_rules)
        ref.start()
        for faces in rolls:
            ref.on_roll(RollObservation(tuple(faces.split())))
        store.save(ref.snapshot())

    for rolls in ((), ("C C C", "C C C")):  # no roll yet; a game won, no series
        saved(rolls)
        problems = []
        assert resume_or_new(settings, store, problems).config.players == ("Ann", "Rose", "Cy")
        assert problems == [] and not list((tmp_path / "state").glob("game-set-aside-*.json"))
    for rolls, series in ((("L . C",), None), (("C C C", "C C C"), SeriesRules(first_to=2))):
        saved(rolls, series)  # a game in play; a series with a game won, still going
        problems = []
        assert resume_or_new(settings, store, problems).config.players == ("Ann", "Rose", "Cy")
        assert len(problems) == 1 and "the saved game had other players or rules" in problems[0]
    assert len(list((tmp_path / "state").glob("game-set-aside-*.json"))) == 2
