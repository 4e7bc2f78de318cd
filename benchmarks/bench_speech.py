"""How soon after ``say()`` does espeak-ng produce sound? The speech part of "settled frame -> first word".

The real :class:`~lcr_pi.outputs.speech.EspeakSpeaker` (queue, worker thread, one espeak-ng process per
sentence) writes each sentence to ``0001.wav``, ``0002.wav``, ... in its output folder. Here those names
are FIFOs, so this script reads the audio as espeak-ng produces it and timestamps:

* first audio: the first sample bytes after the WAV header arrive (what a sound card would start playing);
* first word: first audio + the leading silence espeak-ng puts before the first word (the sound card plays
  that silence in real time before anything is heard).

A sound card adds its own buffer (ALSA period, typically 10-50 ms) that cannot be measured here.

    .venv/bin/python benchmarks/bench_speech.py [--runs 30] [--rates 175,300,450]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from lcr_pi.outputs.speech import EspeakSpeaker

SENTENCES = [
    "Ann rolled L, dot, C.",
    "Pass one chip to Bob on your left and one to the centre.",
    "Bob, your turn: roll three dice.",
    "Cy rolled dot, dot, dot. Keep your chips.",
]
WAV_HEADER_BYTES = 44
AUDIBLE = 1000  # |sample| above this (about -30 dBFS) counts as speech, not the lead-in silence


def read_as_produced(path: Path, result: dict) -> None:
    with open(path, "rb") as fifo:  # blocks until espeak-ng opens it for writing
        header = fifo.read(WAV_HEADER_BYTES)
        first = fifo.read1(65536) if hasattr(fifo, "read1") else fifo.read(1)
        result["first_audio"] = time.perf_counter()
        data = first + fifo.read()
    assert len(header) == WAV_HEADER_BYTES and data, f"{path.name}: espeak-ng wrote no audio"
    rate = int.from_bytes(header[24:28], "little")
    samples = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > AUDIBLE)
    result["lead_in_s"] = (loud[0] if len(loud) else len(samples)) / rate
    result["audio_s"] = len(samples) / rate


def measure(rate_wpm: int, runs: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {"first_audio_ms": [], "first_word_ms": [], "audio_s": []}
    with tempfile.TemporaryDirectory(prefix="bench-speech-") as folder:
        for i in range(1, runs + 1):
            os.mkfifo(Path(folder) / f"{i:04d}.wav")
        speaker = EspeakSpeaker(rate_wpm=rate_wpm, output_dir=folder, sounds=False)
        try:
            for i in range(1, runs + 1):
                result: dict = {}
                reader = threading.Thread(target=read_as_produced, args=(Path(folder) / f"{i:04d}.wav", result))
                reader.start()
                time.sleep(0.01)  # let the reader block in open() first, as a sound card would be waiting
                start = time.perf_counter()
                speaker.say(SENTENCES[(i - 1) % len(SENTENCES)])
                reader.join(timeout=30)
                if not speaker.wait_until_idle(30) or speaker.failure:
                    raise SystemExit(f"espeak-ng failed: {speaker.failure}")
                first_audio_ms = (result["first_audio"] - start) * 1000
                timings["first_audio_ms"].append(first_audio_ms)
                timings["first_word_ms"].append(first_audio_ms + result["lead_in_s"] * 1000)
                timings["audio_s"].append(result["audio_s"])
        finally:
            speaker.close()
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="sentences per rate (default: %(default)s)")
    parser.add_argument("--rates", default="175,300,450", help="words per minute, comma separated")
    args = parser.parse_args(argv)
    print(f"say() -> espeak-ng audio, median (p90) over {args.runs} sentences; {os.cpu_count()} cores here")
    for rate in (int(r) for r in args.rates.split(",")):
        t = measure(rate, args.runs)
        p90 = lambda xs: float(np.percentile(xs, 90))  # noqa: E731
        print(
            f"  {rate:3d} wpm: first audio {statistics.median(t['first_audio_ms']):5.1f} ms "
            f"({p90(t['first_audio_ms']):5.1f}), first word {statistics.median(t['first_word_ms']):5.1f} ms "
            f"({p90(t['first_word_ms']):5.1f}); sentences last {statistics.median(t['audio_s']):.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
