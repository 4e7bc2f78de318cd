"""Benchmark: the words a roll-off for who goes first takes by ear, through the referee.

Usage: python benchmarks/bench_roll_off_words.py [--roll-offs 200]

For tables of 3, 7, 8, 12 and 20 players, with ordinary dice (pips added up) and with LCR dice (dots
counted, so ties are many), plays ``--roll-offs`` random roll-offs of typed rolls and prints, one line a
table and kind of dice: the opening's words (up to the first roller's prompt), the words of each roll
that does not end the roll-off (its score and the next roller's prompt; median and longest), and the
whole roll-off's words up to who goes first (median and longest, with its seconds at 175 words a
minute). The game's opening that follows is not counted: it is the same whoever starts.
"""

from __future__ import annotations

import argparse
import random
import statistics

from by_ear import NAMES, seconds

from lcr_pi.referee import Referee, RollObservation, Say
from lcr_pi.rules import GameConfig

FACES = {"pips": "123456", "LCR": ["L", "C", "R", "dot", "dot", "dot"]}


def _words(outputs) -> int:
    """Words said, up to the game's opening (the roll-off's deciding roll is followed by it)."""
    total = 0
    for o in outputs:
        if isinstance(o, Say):
            if o.text.startswith("A new game of LCR"):
                break
            total += len(o.text.split())
    return total


def roll_off_words(players: int, faces, rng: random.Random) -> tuple[int, list[int], int]:
    """One random roll-off: the opening's words, each roll's that leaves it undecided, and the whole's."""
    referee = Referee(GameConfig.create(NAMES[:players]), first_player="roll-off")
    opening = _words(referee.start())
    rolls, total = [], opening
    while referee.phase == "roll_off":
        words = _words(referee.on_roll(RollObservation(tuple(rng.choice(faces) for _ in range(3)))))
        total += words
        if referee.phase == "roll_off":
            rolls.append(words)
    return opening, rolls, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roll-offs", type=int, default=200, help="random roll-offs per table and kind of dice")
    args = parser.parse_args()
    for kind, faces in FACES.items():
        for players in (3, 7, 8, 12, 20):
            rng = random.Random(players)
            openings, rolls, totals = [], [], []
            for _ in range(args.roll_offs):
                opening, each, total = roll_off_words(players, faces, rng)
                openings.append(opening)
                rolls += each
                totals.append(total)
            print(f"bench_roll_off_words {players} players, {kind} dice: opening {statistics.median(openings):.0f} "
                  f"words; a roll {statistics.median(rolls):.0f} median, {max(rolls)} longest; whole roll-off "
                  f"{statistics.median(totals):.0f} median ({seconds(statistics.median(totals)):.0f} s), "
                  f"{max(totals)} longest ({seconds(max(totals)):.0f} s)", flush=True)


if __name__ == "__main__":
    main()
