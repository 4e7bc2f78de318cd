"""Benchmark: the words a Wild choice and a change of players take by ear, through the referee, at tables of 3 to 20.

Usage: python benchmarks/bench_choice_words.py [--games 20]

For tables of 3, 7, 8, 12 and 20 players (three chips), prints one line a table with the words (and seconds at
175 words a minute) of:

- ``wild``: the Wild choice asked by a W rolled at a game's opening, where everyone else can be robbed: the
  question and how to choose (the roll's prompts, which the first press of choose cuts; the roll's own words
  before them are not counted);
- ``two wilds``: the same for W, W;
- ``wild games``: every Wild choice of ``--games`` random Wild games (seeded by the table's size; each choice
  made with the choose button, pressed a random number of times, and confirm): median and longest;
- ``new players``: players changed at a game's opening (the same number, seated the other way round), words up
  to the first roll: the change said, then the new game's opening;
- ``setup``: the voice setup's last words (``Done: ...``), the players named in the settings file.
"""

from __future__ import annotations

import argparse
import random
import statistics

from by_ear import NAMES, TABLES, seconds, words

from lcr_pi.referee import Prompt, Referee, RollObservation, said
from lcr_pi.rules import GameConfig
from lcr_pi.voice_setup import SetupChoices, VoiceSetup

WILD_FACES = ["L", "C", "R", "W", "dot", "dot"]


def choice_words(outputs) -> int:
    """The Wild choice's words in a roll's outputs: its prompts (the question and how to choose)."""
    return words(o for o in outputs if isinstance(o, Prompt))


def wild_at_opening(players: int, faces: tuple[str, ...]) -> int:
    ref = Referee(GameConfig.create(NAMES[:players], variant="wild"))
    ref.start()
    out = ref.on_roll(RollObservation(faces))
    assert ref.phase == "await_decision", said(out)
    return choice_words(out)


def wild_games(players: int, games: int, rng: random.Random) -> list[int]:
    """The Wild choice's words of every decision in ``games`` random Wild games."""
    asked = []
    for _ in range(games):
        ref = Referee(GameConfig.create(NAMES[:players], variant="wild"))
        ref.start()
        while ref.phase != "game_over":
            dice = ref.game.state.dice_to_roll
            out = ref.on_roll(RollObservation(tuple(rng.choice(WILD_FACES) for _ in range(dice))))
            if ref.phase == "await_decision":
                asked.append(choice_words(out))
            while ref.phase == "await_decision":
                for _ in range(rng.randint(1, len(ref._candidates()))):
                    ref.on_action("choose")
                ref.on_action("confirm")
    return asked


def new_players(players: int) -> int:
    ref = Referee(GameConfig.create(NAMES[:players]))
    ref.start()
    return words(ref.on_action("players", "\n".join(reversed(NAMES[:players]))))


def setup_done(players: int) -> int:
    setup = VoiceSetup(SetupChoices(players=players), names=tuple(NAMES[:players]))
    setup.start()
    return words(setup.on_action("new_game")[1:])  # after "Keeping the rest as it is."


def measures(players: int, games: int) -> dict[str, str]:
    asked = wild_games(players, games, random.Random(players))
    return {
        "wild": _seconds(wild_at_opening(players, ("W", "dot", "dot"))),
        "two wilds": _seconds(wild_at_opening(players, ("W", "W", "dot"))),
        "wild games": f"{statistics.median(asked):.0f} median, {_seconds(max(asked))} longest ({len(asked)} asked)",
        "new players": _seconds(new_players(players)),
        "setup": _seconds(setup_done(players)),
    }


def _seconds(n: int) -> str:
    return f"{n} ({seconds(n):.0f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="random Wild games per table")
    args = parser.parse_args()
    for players in TABLES:
        parts = ", ".join(f"{what} {value}" for what, value in measures(players, args.games).items())
        print(f"bench_choice_words {players} players: {parts}", flush=True)


if __name__ == "__main__":
    main()
