"""The appliance: the systemd unit, the example settings and wiring table, and a service that keeps going.

The unit is parsed and checked key by key, and verified by systemd itself (``systemd-analyze verify``)
where systemd is installed. The bad-input tests run ``lcr-pi run`` as the service would, with a wrong pin,
a pin used twice, no camera, no sound card, a full or read-only card, and check that each is said and
logged by name and that the night goes on (exit status 0, no restart loop).
"""

from __future__ import annotations

import errno
import fnmatch
import io
import logging
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from lcr_pi import cli
from lcr_pi.commands import run as run_command
from lcr_pi.errors import UserError
from lcr_pi.night import assemble
from lcr_pi.settings import load_settings, parse_settings
from lcr_pi.voice_setup import apply_choices, power_on_setup, SetupChoices

REPO = Path(__file__).resolve().parents[1]
UNIT = REPO / "systemd" / "lcr-pi.service"
EXAMPLE = REPO / "systemd" / "lcr-pi.example.toml"
INSTALL_DOC = REPO / "README.md"


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """systemd's unit syntax: [Section], Key=Value lines (keys may repeat), # and ; comments."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        key, _, value = line.partition("=")
        assert current is not None, f"{raw!r} before any [Section]"
        current.append((key.strip(), value.strip()))
    return sections


@pytest.fixture(scope="module")
def unit():
    return parse_unit(UNIT.read_text())


def values(unit, section, key) -> list[str]:
    return [v for k, v in unit[section] if k == key]


def one(unit, section, key) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key} appears {len(found)} times"
    return found[0]


# -- the unit --------------------------------------------------------------------------------------------------


def test_runs_as_its_own_user_in_the_device_groups(unit):
    assert one(unit, "Service", "User") == "lcr-pi"
    assert set(one(unit, "Service", "SupplementaryGroups").split()) == {"gpio", "video", "audio"}
    # The documented useradd line makes the same user with the same groups.
    useradd = re.search(r"useradd .*?lcr-pi$", UNIT.read_text().replace("\\\n#", ""), re.M | re.S).group(0)
    assert "--system" in useradd and "--groups gpio,video,audio" in useradd


def test_starts_lcr_pi_run_with_the_documented_paths(unit):
    command = shlex.split(one(unit, "Service", "ExecStart"))
    assert command[0] == "/opt/lcr-pi/venv/bin/lcr-pi"
    args = cli.build_parser().parse_args(command[1:])  # every option exists in the real command line
    assert args.command == "run" and args.config == "/etc/lcr-pi/lcr-pi.toml"
    assert args.state_dir == "/var/lib/lcr-pi" == one(unit, "Service", "WorkingDirectory")
    assert one(unit, "Service", "StateDirectory") == "lcr-pi"  # systemd makes /var/lib/lcr-pi, owned by the user
    assert one(unit, "Service", "StandardInput") == "null"


def test_restarts_after_a_crash_but_never_loops_forever(unit):
    assert one(unit, "Service", "Restart") == "on-failure"
    assert 1 <= int(one(unit, "Service", "RestartSec")) <= 60
    assert int(one(unit, "Unit", "StartLimitBurst")) * int(one(unit, "Service", "RestartSec")) < \
        int(one(unit, "Unit", "StartLimitIntervalSec"))  # the limit can actually trip
    # Exit status 2 is lcr-pi's "your settings are wrong" (cli.main): restarting cannot fix it.
    assert one(unit, "Service", "RestartPreventExitStatus") == "2"


def test_a_settings_error_exits_with_the_status_the_unit_does_not_restart(tmp_path, capsys):
    config = tmp_path / "lcr-pi.toml"
    # A mistake in [game] (a pin mistake is said and left out, and the night plays: test_run_setup).
    config.write_text("[game]\nplayers = [\"Ann\", \"Bob\", \"Cy\"]\nstarting_chips = 0\n")
    assert cli.main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config}: game.starting_chips must be a whole number from 1 to 100" in err
    assert "Traceback" not in err


def test_starts_at_boot_after_sound_and_udev(unit):
    assert one(unit, "Install", "WantedBy") == "multi-user.target"
    after = " ".join(values(unit, "Unit", "After")).split()
    assert "sound.target" in after and "systemd-udev-trigger.service" in after


def test_hardened_yet_reaching_gpio_camera_and_sound(unit):
    service = dict(unit["Service"])
    assert service["ProtectSystem"] == "strict" and service["ProtectHome"] == "yes"
    assert service["PrivateTmp"] == "yes" and service["NoNewPrivileges"] == "yes"
    assert service["DevicePolicy"] == "closed"
    assert "PrivateDevices" not in service  # it would hide /dev/gpiochip*, /dev/video*, /dev/snd
    allowed = [v.split() for v in values(unit, "Service", "DeviceAllow")]
    assert all(rights == "rw" for _, rights in allowed)
    groups = [spec.removeprefix("char-") for spec, _ in allowed]
    # Device group names as /proc/devices lists them on a Raspberry Pi 4 and 5 (kernel 6.x).
    needed = {
        "GPIO character device (/dev/gpiochip*)": "gpiochip",
        "Pi 4 /dev/gpiomem": "bcm2835-gpiomem",
        "Pi 5 /dev/gpiomem0..4": "gpiomem",
        "camera video nodes (/dev/video*, /dev/v4l-subdev*)": "video4linux",
        "media controller (/dev/media*)": "media",
        "camera buffers (/dev/dma_heap/*)": "dma_heap",
        "VideoCore (/dev/vchiq)": "vchiq",
        "sound (/dev/snd/*)": "alsa",
    }
    for what, name in needed.items():
        assert any(fnmatch.fnmatchcase(name, g) for g in groups), f"no DeviceAllow for the {what}"
    # Local sockets, udev (libcamera finds cameras through it) and the scoreboard's web server; nothing else.
    assert set(service["RestrictAddressFamilies"].split()) == {"AF_UNIX", "AF_NETLINK", "AF_INET", "AF_INET6"}
    # The state folder is writable despite ProtectSystem=strict (StateDirectory), and so is the working
    # folder where lgpio makes its notification pipes.
    assert service["WorkingDirectory"] == f"/var/lib/{service['StateDirectory']}"


def test_systemd_itself_accepts_the_unit(tmp_path):
    analyze = shutil.which("systemd-analyze")
    units = Path("/lib/systemd/system")
    if analyze is None or not (units / "multi-user.target").exists():
        pytest.skip("systemd-analyze and systemd's units are not installed here (apt install systemd)")
    # A root with the unit, systemd's own units, and a stand-in for the installed lcr-pi program (verify
    # checks that ExecStart's program exists and is executable).
    root = tmp_path / "root"
    shutil.copytree(units, root / "usr/lib/systemd/system", symlinks=True)
    (root / "etc/systemd/system").mkdir(parents=True)
    shutil.copy(UNIT, root / "etc/systemd/system/lcr-pi.service")
    program = root / "opt/lcr-pi/venv/bin/lcr-pi"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    done = subprocess.run([analyze, "verify", f"--root={root}", "lcr-pi.service"], capture_output=True,
                          text=True, timeout=60)
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if "lcr-pi" in line]
    assert done.returncode == 0 and complaints == [], done.stdout + done.stderr


def test_the_arm64_check_script_is_valid_shell():
    for script in [REPO / "tools/arm64-check.sh", *sorted((REPO / "tools/arm64").glob("*.sh"))]:
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"
        assert script.stat().st_mode & 0o111, f"{script.name} is not executable"


# -- the example settings and the wiring table ----------------------------------------------------------------


def wiring_table() -> list[tuple[str, int, int]]:
    """(part, BCM number, physical pin) rows of the wiring table in README.md."""
    rows = re.findall(r"^\| ([^|]+?) \| GPIO(\d+) \| (\d+) \|", INSTALL_DOC.read_text(), re.M)
    return [(part, int(bcm), int(physical)) for part, bcm, physical in rows]


def test_the_example_settings_are_valid_and_match_the_wiring_table():
    settings = load_settings(EXAMPLE)
    gpio = settings.gpio
    in_settings = {f"seat {i + 1} LED": pin for i, pin in enumerate(gpio.seat_leds)}
    in_settings.update({"centre LED": gpio.centre_led, "confirm button": gpio.confirm_button,
                        "undo button": gpio.undo_button, "repeat button": gpio.repeat_button,
                        "status button": gpio.status_button, "choose button": gpio.choose_button})
    table = wiring_table()
    assert {part: bcm for part, bcm, _ in table if part != "buzzer (optional)"} == in_settings
    board = MockFactory().board_info
    for part, bcm, physical in table:  # the physical pin numbers are right for these GPIOs
        assert board.to_gpio(f"BOARD{physical}") == f"GPIO{bcm}", part
    assert settings.storage.state_dir == "/var/lib/lcr-pi"


@pytest.fixture
def mock_pins(factory):
    return factory


def test_the_example_settings_assemble_a_night_on_mock_pins(tmp_path, mock_pins):
    example = parse_settings(EXAMPLE.read_text().replace("/var/lib/lcr-pi", str(tmp_path)), source="example")
    settings, problems = power_on_setup(example, mode="remembered")  # six LEDs wired, four players
    night = assemble(settings, keyboard=False)
    try:
        assert problems == [] and night.problems == []
        assert len(night.lights.seats) == 4 and night.store is not None
    finally:
        night.close()
    five = apply_choices(example, SetupChoices(players=5))
    night = assemble(five, keyboard=False)
    try:
        assert night.problems == [] and len(night.lights.seats) == 5
    finally:
        night.close()


# -- bad input at the table: said, logged, and the night goes on ------------------------------------------------


def night_settings(tmp_path, gpio: str = "", extra: str = ""):
    return parse_settings(f'[game]\nplayers = ["Ann", "Bob", "Cy"]\n[speech]\nengine = "print"\n'
                          f"[storage]\nstate_dir = '{tmp_path / 'state'}'\n[gpio]\n{gpio}\n{extra}", source="t.toml")


def test_a_wrong_pin_name_turns_the_leds_off_and_says_which(tmp_path, mock_pins):
    night = assemble(night_settings(tmp_path, "seat_leds = [17, 'GPIO99', 22]\ncentre_led = 12\n"), keyboard=False)
    try:
        assert night.problems == ["LEDs are off: bad pin 'GPIO99' for the seat 2 LED (Bob): "
                                  + night.problems[0].split("(Bob): ", 1)[1]]
        assert "GPIO99" in night.problems[0] and type(night.lights).__name__ == "TerminalLights"
    finally:
        night.close()


def test_a_pin_used_for_an_led_and_a_button_is_named(tmp_path, mock_pins):
    night = assemble(night_settings(tmp_path, "seat_leds = [17, 27, 22]\ncentre_led = 12\nconfirm_button = 17\n"
                                              "undo_button = 6\n"), keyboard=False)
    try:
        assert night.problems == ["the confirm button is off, and so is the long press that starts a new game: "
                                  "pin GPIO17 is used twice: for the seat 1 LED (Ann) and for the confirm button "
                                  "(given as 17)"]
        assert night.lights.seats[0].pin.info.name == "GPIO17"  # the LEDs still work
        press(mock_pins, 6)  # and so does the undo button
        assert night.actions.get(timeout=5) == ("undo", None)
    finally:
        night.close()


def press(factory, number) -> None:
    """A button wired to ground with the internal pull-up: pressed reads low."""
    factory.pin(number).drive_low()
    factory.pin(number).drive_high()


@pytest.mark.parametrize("undo_pin", [17, "GPIO17", "BOARD11"])  # three spellings of one pin
def test_an_undo_button_on_an_led_pin_loses_only_the_undo_button(tmp_path, mock_pins, undo_pin):
    night = assemble(night_settings(tmp_path, "seat_leds = [17, 27, 22]\ncentre_led = 12\nconfirm_button = 5\n"
                                              f"undo_button = {undo_pin!r}\nrepeat_button = 13\n"), keyboard=False)
    try:
        assert night.problems == ["the undo button is off: pin GPIO17 is used twice: for the seat 1 LED (Ann) and "
                                  f"for the undo button (given as {undo_pin!r})"]
        press(mock_pins, 5)
        assert night.actions.get(timeout=5) == ("confirm", None)  # on release: confirm carries the long press
        press(mock_pins, 13)
        assert night.actions.get(timeout=5) == ("repeat", None)
        night.lights.show_turn(0)  # pin 17 is the LED's: driven by it, no button on it
        assert mock_pins.pin(17).function == "output" and mock_pins.pin(17).state
        night.lights.show_turn(None)
        assert night.actions.poll() is None
    finally:
        night.close()


def test_an_invalid_button_pin_name_loses_only_that_button(tmp_path, mock_pins):
    night = assemble(night_settings(tmp_path, "seat_leds = [17, 27, 22]\ncentre_led = 12\nconfirm_button = 5\n"
                                              "undo_button = 6\nstatus_button = 'GPIO99'\n"), keyboard=False)
    try:
        [problem] = night.problems
        assert problem.startswith("the status button is off: bad pin 'GPIO99' for the status button: ")
        press(mock_pins, 6)
        press(mock_pins, 5)
        assert [night.actions.get(timeout=5) for _ in range(2)] == [("undo", None), ("confirm", None)]
    finally:
        night.close()


def test_without_gpio_on_this_computer_every_button_is_off_and_said_once(tmp_path, monkeypatch):
    from gpiozero import Device
    from gpiozero.exc import BadPinFactory

    def no_gpio():
        raise BadPinFactory("Unable to load any default pin factory!")

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setattr(Device, "ensure_pin_factory", staticmethod(no_gpio))
    night = assemble(night_settings(tmp_path, "confirm_button = 5\nundo_button = 6\n"), keyboard=False)
    try:
        assert night.problems == ["buttons are off: cannot drive GPIO pins on this computer (Unable to load any "
                                  "default pin factory!); on a Raspberry Pi, the user running lcr-pi must be in "
                                  "the gpio group (sudo usermod -aG gpio,video,audio lcr-pi, then restart) and "
                                  "python3-lgpio installed; on a laptop run `lcr-pi demo`, or set "
                                  "GPIOZERO_PIN_FACTORY=mock to try with simulated pins"]
    finally:
        night.close()


class SlowTyping(io.StringIO):
    """Lines typed with a pause before each, so that speech has time to fail before the next; a
    terminal (``isatty``) unless ``terminal`` is False (the service's input is /dev/null)."""

    def __init__(self, text, pause_s, terminal=True):
        super().__init__(text)
        self.pause_s = pause_s
        self.terminal = terminal

    def isatty(self):
        return self.terminal

    def __iter__(self):
        while line := self.readline():
            time.sleep(self.pause_s)
            yield line


def run_night(monkeypatch, tmp_path, typed: str, *, config_text: str, dice="keyboard", camera=None, pause_s=0.0,
              terminal=True):
    config = tmp_path / "lcr-pi.toml"
    config.write_text(config_text)
    monkeypatch.setattr(sys, "stdin", SlowTyping(typed, pause_s, terminal))
    argv = ["run", "--config", str(config), "--dice", dice, "--new"] + (["--camera", camera] if camera else [])
    return run_command.run(cli.build_parser().parse_args(argv))  # the real options, whatever run adds later


def base_config(tmp_path, speech="print"):
    return (f'[game]\nplayers = ["Ann", "Bob", "Cy"]\n[speech]\nengine = "{speech}"\n'
            f"[storage]\nstate_dir = '{tmp_path / 'state'}'\n[gpio]\nenabled = false\n")


def test_no_camera_means_a_spoken_warning_and_typed_rolls(tmp_path, monkeypatch, capsys, caplog):
    import lcr_pi.vision.reader as reader

    class AnyReader:  # the models may or may not be trained yet; the camera is what is missing here
        def read(self, frame, dice_kind="auto"):
            raise AssertionError("no frame can come from a missing camera")

    monkeypatch.setattr(reader, "DiceReader", AnyReader)
    caplog.set_level(logging.ERROR)
    status = run_night(monkeypatch, tmp_path, "L . C\nquit\n", config_text=base_config(tmp_path), dice="camera",
                       camera=str(tmp_path / "no-camera"))
    out = capsys.readouterr().out
    assert status == 0
    [lost] = [line for line in out.splitlines() if line.startswith("SAY: The camera has stopped")]
    assert f"camera source '{tmp_path / 'no-camera'}' is not" in lost
    assert lost.endswith("I keep trying; you can type the rolls meanwhile.")
    assert "SAY: Ann rolled L, dot, C." in out  # the typed roll was played
    assert any("camera lost" in r.getMessage() for r in caplog.records)
    # Under the service there is no keyboard to type on: the table is not sent looking for one
    # (found by an audit, 2026-12-03).
    assert run_night(monkeypatch, tmp_path, "quit\n", config_text=base_config(tmp_path), dice="camera",
                     camera=str(tmp_path / "no-camera"), terminal=False) == 0
    [lost] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("SAY: The camera has stopped")]
    assert lost.endswith("I keep trying; the game waits for it.")


def test_no_dice_reader_means_typed_rolls_and_says_why(tmp_path, monkeypatch, capsys):
    import lcr_pi.vision.reader as reader

    def broken(*a, **k):
        raise UserError("missing model file models/dice_detector.onnx")

    monkeypatch.setattr(reader, "DiceReader", broken)
    assert run_night(monkeypatch, tmp_path, "4 1 6\nquit\n", config_text=base_config(tmp_path), dice="camera") == 0
    out = capsys.readouterr().out
    assert "SAY: Warning: the dice reader cannot start (missing model file models/dice_detector.onnx); " \
           "type the rolls instead." in out
    assert "SAY: Ann rolled L, dot, R." in out


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_no_sound_card_prints_the_words_and_the_game_goes_on(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("ALSA_CARD", "9")  # no machine here has a sound card number 9
    caplog.set_level(logging.INFO)
    status = run_night(monkeypatch, tmp_path, "L . C\nquit\n", config_text=base_config(tmp_path, "espeak-ng"),
                       pause_s=1.0)
    out = capsys.readouterr().out
    assert status == 0
    assert ("Speech failed (espeak-ng found no sound card); printing the words instead, and trying the sound "
            "card again every 1.5 seconds for a minute, then every 10 seconds.") in out
    log = (tmp_path / "state" / "game-log.jsonl").read_text()
    assert '"chips":[1,4,3]' in log and '"roll":["L",".","C"]' in log  # refereed and saved
    assert any("speech failed: espeak-ng found no sound card" in r.getMessage() for r in caplog.records)


def test_a_full_card_is_said_once_and_the_game_goes_on(tmp_path, monkeypatch, capsys, caplog):
    import lcr_pi.persist as persist

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(persist, "write_atomic", full)
    caplog.set_level(logging.ERROR)
    assert run_night(monkeypatch, tmp_path, ". . .\n. . .\nstatus\nquit\n", config_text=base_config(tmp_path)) == 0
    out = capsys.readouterr().out
    warnings = [line for line in out.splitlines() if line.startswith("SAY: Warning:")]
    assert warnings == [f"SAY: Warning: cannot save the game to {tmp_path / 'state' / 'game.json'} "
                        "(No space left on device). The game goes on, but it is not being saved."]
    assert "Cy, your turn" in out or "It is Cy's turn" in out  # two turns were played after the warning
    assert sum("No space left on device" in r.getMessage() for r in caplog.records) >= 2  # logged every time


def test_a_read_only_state_folder_is_said_at_the_start_and_the_game_goes_on(tmp_path, monkeypatch, capsys):
    (tmp_path / "card").write_text("not a folder")
    config = base_config(tmp_path).replace(str(tmp_path / "state"), str(tmp_path / "card" / "state"))
    assert run_night(monkeypatch, tmp_path, "L . C\nquit\n", config_text=config) == 0
    out = capsys.readouterr().out
    assert f"SAY: Warning: the game is not being saved: cannot create the state folder {tmp_path / 'card' / 'state'}" \
           in out
    assert "SAY: Ann rolled L, dot, C." in out


@pytest.mark.parametrize("variant, dice, told", [("wild", "auto", "pip-or-wild"), ("classic", "auto", "auto"),
                                                 ("wild", "wild", "wild"), ("wild", "pip", "pip"),
                                                 ("wild", "lcr", "wild"), ("classic", "lcr", "lcr")])
def test_the_camera_reads_a_wild_game_as_the_dice_show_unless_told_which(tmp_path, monkeypatch, variant, dice, told):
    """``dice = "auto"`` in a Wild game: ordinary dice (a one is W) or Wild dice, whichever the rolls
    show (:class:`lcr_pi.camera_dice.WildGameDice`); a kind set in the settings is passed on as it is,
    but for LCR dice in a Wild game, which are Wild dice."""
    from types import SimpleNamespace

    import cv2
    import numpy as np

    import lcr_pi.vision.reader as reader
    from lcr_pi.camera_dice import WildGameDice

    kinds = []

    class Told:
        def read(self, frame, *, dice_kind="auto", **options):
            kinds.append(dice_kind)
            return reader.Reading((), "no_dice")

    monkeypatch.setattr(reader, "DiceReader", Told)
    monkeypatch.chdir(tmp_path)  # no calibration or taught dice here
    frames = tmp_path / "frames"  # the camera: a folder of frames
    frames.mkdir()
    cv2.imwrite(str(frames / "0001.png"), np.zeros((48, 64, 3), np.uint8))
    config = tmp_path / "lcr-pi.toml"
    config.write_text(base_config(tmp_path).replace("[game]\n", f'[game]\nvariant = "{variant}"\nwild_pip = 1\n')
                      + f'[reader]\ndice = "{dice}"\n[camera]\nsource = "{frames}"\n')
    night = SimpleNamespace(problems=[])
    camera = run_command._camera_dice(load_settings(config), night, say=lambda text: None)
    if (variant, dice) == ("wild", "lcr"):  # LCR dice without a W cannot be a Wild game's: said, and read as Wild
        assert night.problems == ['the game is Wild but the settings say dice = "lcr", which have no W face; '
                                  'reading them as Wild dice (set dice to "wild" in [reader])']
    else:
        assert night.problems == []
    assert isinstance(camera.read, WildGameDice) == (told == "pip-or-wild")
    if told == "pip-or-wild":
        assert camera.read.wild_pip == 1  # the pip that is a W: what makes a roll of ones ambiguous
    camera.read(np.zeros((48, 64, 3), np.uint8))  # what the camera would hand on at rest
    assert kinds == [told]
