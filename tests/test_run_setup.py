"""lcr-pi run with the voice setup: the remembered setup is used, a damaged one is said, a settings error is spoken."""

import io
import sys

from lcr_pi import cli
import lcr_pi.outputs.speech as speech


def run_with(config, monkeypatch, *extra):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    return cli.main(["run", "--config", str(config), "--dice", "keyboard", *extra])


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
    spoken = []

    class Recorder(speech.PrintSpeaker):
        def say(self, text):
            spoken.append(text)

    monkeypatch.setattr(speech, "make_speaker", lambda *a, **k: Recorder())
    config = tmp_path / "c.toml"
    config.write_text("[speech]\nrate = 900\n")
    assert run_with(config, monkeypatch) == 2
    assert spoken == [f"The settings file has a mistake, so the game cannot start. {config}: speech.rate must be a "
                      "whole number from 80 to 450, got 900."]
