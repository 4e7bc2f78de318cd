"""lcr-pi run with the voice setup: the remembered setup is used, a damaged one is said, a settings error is spoken."""

import io
import sys

from lcr_pi import cli
import lcr_pi.outputs.speech as speech


def run_with(config, monkeypatch, *extra):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    return cli.main(["run", "--config", str(config), "--dice", "keyboard", *extra])


def recorded_speech(monkeypatch) -> list[str]:
    """What every speaker the program makes says, in a list (printed nowhere)."""
    spoken = []

    class Recorder(speech.PrintSpeaker):
        def say(self, text):
            spoken.append(text)

    monkeypatch.setattr(speech, "make_speaker", lambda *a, **k: Recorder())
    return spoken


def test_the_remembered_setup_is_used_and_a_damaged_one_is_said(tmp_path, monkeypatch, capsys):
    state = tmp_path / "state"
    state.mkdir()
    (state / "setup.json").write_text('{"format": "lcr-pi-setup", "version": 1, "players": 5, "variant": "wild"}')
    config = tmp_path / "c.toml"
    config.write_text(f'[speech]\nengine = "print"\n[storage]\nstate_dir = "{state}"\n[gpio]\nenabled = false\n')
    assert run_with(config, monkeypatch) == 0
    assert "Player 1, Player 2, Player 3, Player 4 and Player 5" in capsys.readouterr().out
    (state / "setup.json").write_text("{")
    assert run_with(config, monkeypatch, "--new") == 0
    assert "SAY: Warning: the remembered game setup is damaged" in capsys.readouterr().out


def test_a_settings_error_is_spoken_before_the_exit(tmp_path, monkeypatch):
    spoken = recorded_speech(monkeypatch)
    config = tmp_path / "c.toml"
    config.write_text("[speech]\nrate = 900\n")
    assert run_with(config, monkeypatch) == 2
    assert spoken == [f"The settings file has a mistake, so the game cannot start. {config}: speech.rate must be a "
                      "whole number from 80 to 450, got 900."]


def test_a_scoreboard_port_in_use_is_said_and_the_game_is_played_without_the_page(tmp_path, monkeypatch, capsys):
    # Found by an audit (2026-12-03): the port in use (or an address the network had not given the Pi
    # yet) exited with status 2, which systemd does not restart: no game at all.
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    config = tmp_path / "c.toml"
    config.write_text(f'[speech]\nengine = "print"\n[storage]\nstate_dir = "{tmp_path / "state"}"\n'
                      '[gpio]\nenabled = false\n')
    monkeypatch.setattr(sys, "stdin", io.StringIO("L . C\nquit\n"))
    try:
        assert cli.main(["run", "--config", str(config), "--dice", "keyboard", "--setup", "off",
                         "--web", f"127.0.0.1:{port}"]) == 0
    finally:
        taken.close()
    out = capsys.readouterr().out
    assert "SAY: Warning: the scoreboard page cannot start" in out and "The game goes on without it." in out
    assert "Player 1 rolled L, dot, C." in out


def test_a_voice_espeak_does_not_know_falls_back_to_english_and_is_said(tmp_path):
    import shutil

    import pytest

    from lcr_pi.night import make_night_speaker
    from lcr_pi.settings import parse_settings

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    problems = []
    speaker = make_night_speaker(parse_settings('[speech]\nengine = "espeak-ng"\nvoice = "en-uk"\n'), problems=problems)
    try:
        assert isinstance(speaker, speech.EspeakSpeaker) and speaker.voice == "en"
        assert len(problems) == 1 and problems[0].startswith("[speech] voice: unknown speech voice 'en-uk'")
        assert problems[0].endswith("speaking with the voice 'en'")
    finally:
        speaker.close()


def test_an_espeak_that_lists_no_voices_prints_the_words_and_says_why(tmp_path, monkeypatch):
    from lcr_pi.night import make_night_speaker
    from lcr_pi.settings import parse_settings

    broken = tmp_path / "espeak-ng"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    speech.available_voices.cache_clear()  # the listing is remembered per program name
    try:
        problems = []
        speaker = make_night_speaker(parse_settings('[speech]\nengine = "auto"\n'), problems=problems)
        assert isinstance(speaker, speech.PrintSpeaker)
        assert len(problems) == 1 and "espeak-ng lists no voices" in problems[0]
    finally:
        speech.available_voices.cache_clear()  # not the broken one's for the tests after this


def test_a_players_mistake_is_the_command_lines_not_the_settings_files(tmp_path, monkeypatch, capsys):
    # Found by an audit (2026-12-03): "--players Ann,Ann,Bob" was said and printed as "The settings file
    # has a mistake" when there was no settings file.
    spoken = recorded_speech(monkeypatch)
    config = tmp_path / "c.toml"
    config.write_text('[speech]\nengine = "print"\n')
    for players, problem in (("Ann,Ann,Bob", "two players are called 'Ann'"), ("Ann", "at least 3 players")):
        assert run_with(config, monkeypatch, "--players", players) == 2
        err = capsys.readouterr().err
        assert f"--players {players}: " in err and problem in err and "settings file" not in err
    assert spoken == []


def test_a_night_with_buttons_says_what_they_do_before_the_game(tmp_path, monkeypatch, capsys, factory):
    # Found by an audit (2026-12-03): no button explained the buttons, and help could only be typed.
    config = tmp_path / "c.toml"
    config.write_text(f'[speech]\nengine = "print"\n[storage]\nstate_dir = "{tmp_path / "state"}"\n'
                      "[gpio]\nenabled = true\nconfirm_button = 5\nundo_button = 6\nrepeat_button = 13\n")
    assert run_with(config, monkeypatch, "--setup", "off") == 0
    out = capsys.readouterr().out
    guide = out.index("SAY: Buttons: confirm, undo")
    assert guide < out.index("SAY: A new game of LCR")
