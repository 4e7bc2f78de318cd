"""Benchmark: the words a game's opening takes by ear, through the referee, at tables of 3 to 20.

Usage: python benchmarks/bench_opening_words.py

For tables of 3, 7, 8, 12 and 20 players (three chips, classic, and Wild), prints one line a table with the
words (and seconds at 175 words a minute) said up to the first roll:

- ``first``: the night's first game, its first player named (``lcr-pi run``'s first words, less the buttons);
- ``wild``: the same in a Wild game, whose rules are said too;
- ``roll-off``: the game's opening after a roll-off, from "A new game" on (the roll-off's own words, up to
  who goes first, are ``bench_roll_off_words.py``'s);
- ``winner`` and ``next-seat``: the next game of a series, by each rule of who starts it, from the press of
  confirm after a game;
- ``restart``: "Welcome back" after a power cut at a game's opening;
- ``status``: the status button at a game's opening.

Deterministic: every game is played out with C, C, C.
"""

from __future__ import annotations

from by_ear import NAMES, TABLES, seconds, words

from lcr_pi.referee import Referee, RollObservation, said
from lcr_pi.rules import GameConfig, SeriesRules


def opening_after_roll_off(players: int) -> int:
    """The game's opening that follows a roll-off, from "A new game" on: the last seat rolls highest."""
    ref = Referee(GameConfig.create(NAMES[:players]), first_player="roll-off")
    ref.start()
    while ref.phase == "roll_off":
        last = ref.roll_off.next_seat == players - 1
        out = ref.on_roll(RollObservation(("6", "6", "6") if last else ("1", "2", "3")))
    text = said(out)
    return len(text[text.index("A new game"):].split())


def next_game_of_series(players: int, next_starter: str) -> int:
    """The press of confirm after a series' first game: the next game's opening."""
    ref = Referee(GameConfig.create(NAMES[:players]), series_rules=SeriesRules(first_to=3, next_starter=next_starter))
    ref.start()
    while ref.phase != "game_over":
        ref.on_roll(RollObservation(("C", "C", "C")))
    return words(ref.on_action("confirm"))


def measures(players: int) -> dict[str, int]:
    config = GameConfig.create(NAMES[:players])
    ref = Referee(config)
    first = words(ref.start())
    status = words(ref.on_action("status"))
    restart = words(Referee.restore(ref.snapshot()).start())
    return {
        "first": first,
        "wild": words(Referee(GameConfig.create(NAMES[:players], variant="wild")).start()),
        "roll-off": opening_after_roll_off(players),
        "winner": next_game_of_series(players, "winner"),
        "next-seat": next_game_of_series(players, "next-seat"),
        "restart": restart,
        "status": status,
    }


def main() -> None:
    for players in TABLES:
        parts = ", ".join(f"{what} {n} ({seconds(n):.0f} s)" for what, n in measures(players).items())
        print(f"bench_opening_words {players} players: {parts}", flush=True)


if __name__ == "__main__":
    main()
