"""The settings file: defaults, every section, and refusals that name the key and the value."""

import pytest

from lcr_pi.errors import UserError
from lcr_pi.settings import Settings, load_settings, parse_settings, with_players

FULL = """
[game]
players = ["Ann", "Bob", "Cy", "Dee"]
starting_chips = 4
variant = "wild+last-chip"
wild_pip = 2
first_player = "roll-off"

[series]
best_of = 5
next_starter = "winner"

[speech]
engine = "print"
voice = "en-gb"
rate = 450
volume = 80
sounds = false

[gpio]
seat_leds = [17, 27, 22, "GPIO10"]
centre_led = 23
buzzer = 24
confirm_button = 5
undo_button = 6
long_press_seconds = 1.5

[camera]
source = "webcam:0"
width = 640
height = 480

[reader]
dice = "lcr"

[storage]
state_dir = "/tmp/lcr"
evidence_frames = 50

[web]
enabled = true
bind = "192.168.1.20:8080"
pin = "4321"
"""


def test_every_section_is_read():
    s = parse_settings(FULL, source="lcr-pi.toml")
    cfg = s.game_config()
    assert cfg.players == ("Ann", "Bob", "Cy", "Dee") and cfg.starting_chips == 4
    assert cfg.wild and cfg.last_chip_wins and cfg.wild_pip == 2
    assert s.series_rules().best_of == 5 and s.series_rules().next_starter == "winner"
    assert s.speech.rate == 450 and s.speech.sounds is False
    assert s.gpio.seat_leds == (17, 27, 22, "GPIO10") and s.gpio.long_press_seconds == 1.5
    assert s.camera.source == "webcam:0" and s.reader.dice == "lcr" and s.storage.evidence_frames == 50
    assert s.web.enabled and s.web.bind == "192.168.1.20:8080" and s.web.pin == "4321"


def test_defaults_without_a_file():
    s = load_settings(None)
    assert s == Settings()
    assert s.game_config().players == ("Player 1", "Player 2", "Player 3")
    assert s.series_rules() is None
    assert with_players(s, ["Ann", "Bob", "Cy"]).game_config().players == ("Ann", "Bob", "Cy")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[speech]\nvolume = 101", "t.toml: speech.volume must be a whole number from 0 to 100, got 101"),
        ("[speech]\nrate = \"fast\"", "speech.rate must be a whole number from 80 to 450, got 'fast'"),
        ("[speech]\nengine = \"festival\"", "speech.engine must be one of 'auto', 'espeak-ng', 'print', got 'festival'"),
        ("[gpio]\ncentre_led = 40", "gpio.centre_led must be a GPIO number from 0 to 27"),
        ("[gpio]\nseat_led = [1]", "unknown key 'gpio.seat_led' (did you mean 'gpio.seat_leds'?)"),
        ("[sound]\nrate = 1", "unknown section 'sound'"),
        ("[game]\nplayers = [\"Ann\", \"Bob\"]", "t.toml: [game] LCR needs at least 3 players"),
        ("[game]\nplayers = [\"Ann\", \"Bob\", \"Ann\"]", "two players are called 'Ann'"),
        ("[game]\nvariant = \"turbo\"", "unknown variant 'turbo'"),
        ("[game]\nfirst_player = \"Zed\"", "game.first_player no player called 'Zed'"),
        ("[series]\nfirst_to = 3\nbest_of = 5", "[series] a series is either"),
        ("[storage]\nevidence_frames = -1", "storage.evidence_frames must be a whole number"),
        ("game = 3", "game must be a [game] table"),
        ("[web]\nbind = \"8.8.8.8:80\"", "t.toml: web.bind "),
        ("[web]\nbind = \"localhost:http\"", "web.bind must be HOST:PORT"),
        ("[web]\npin = \"12\"", "web.pin must be a text of 4 to 32 characters"),
        ("[game\n", "t.toml: not valid TOML"),
    ],
)
def test_bad_settings_name_the_key_and_value(text, message):
    with pytest.raises(UserError) as err:
        parse_settings(text, source="t.toml")
    assert message in str(err.value)


def test_missing_and_unreadable_files_are_named(tmp_path):
    with pytest.raises(UserError, match="config file .*nope.toml does not exist"):
        load_settings(tmp_path / "nope.toml")
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match="bin.toml cannot be read"):
        load_settings(bad)


def test_mistakes_outside_the_game_and_the_storage_can_be_left_out_and_named():
    skipped = []
    settings = parse_settings('[speech]\nrate = 900\nvolume = 50\n[gpio]\nconfirm_buton = 5\nundo_button = 6\n',
                              source="t.toml", skipped=skipped)
    assert (settings.speech.rate, settings.speech.volume, settings.gpio.undo_button) == (175, 50, 6)
    assert skipped == ["t.toml: speech.rate must be a whole number from 80 to 450, got 900; the default, 175, is used",
                       "t.toml: unknown key 'gpio.confirm_buton' (did you mean 'gpio.confirm_button'?); it is left out"]
    # What decides the game and where it is saved is never guessed, nor a file that is not TOML.
    for text in ('[game]\nstarting_chips = 0\n', '[storage]\nstate_dir = ""\n', '[series]\nfirst_to = -2\n', '[speach]\nrate = 100\n',
                 '[speech\n', '[game]\nplayers = ["Ann", "Ann", "Bob"]\n'):
        with pytest.raises(UserError):
            parse_settings(text, source="t.toml", skipped=[])
