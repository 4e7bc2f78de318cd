"""What the benchmarks of the table by ear share: the players' names, the speaking rate, and how words
are counted (every word the referee says in a batch of outputs).

Imported by ``bench_big_table.py``, ``bench_choice_words.py``, ``bench_opening_words.py`` and
``bench_roll_off_words.py`` (run as scripts from ``benchmarks/``, which is then on the path).
"""

from __future__ import annotations

from lcr_pi.referee import said

NAMES = "Ann Bob Cy Di Ed Flo Gus Hal Ivy Jo Kim Lu Max Ned Oli Pam Quin Ros Sam Tess".split()
WORDS_PER_MINUTE = 175  # the voice setup's "normal" speech rate
TABLES = (3, 7, 8, 12, 20)  # the table sizes the word benchmarks compare: small, the largest small, big


def words(outputs) -> int:
    """The words said in ``outputs`` (the referee's; only what is spoken counts)."""
    return len(said(outputs).split())


def seconds(n: float) -> float:
    """How long ``n`` words take to say at :data:`WORDS_PER_MINUTE`."""
    return 60 * n / WORDS_PER_MINUTE
