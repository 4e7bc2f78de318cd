"""Short cue sounds, synthesised with numpy, so a listener knows what happened before the words arrive.

Each cue differs in pitch *and* rhythm (so it is told apart on a tinny mono speaker, or by someone who
hears pitch poorly), and L and R are also panned to their side on a stereo speaker.

>>> sorted(CUES)
['attention', 'centre', 'left', 'right', 'win']
>>> samples = cue_samples("left")
>>> samples.dtype, samples.shape[1]
(dtype('int16'), 2)
"""

from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lcr_pi.errors import UserError

SAMPLE_RATE = 22050
_FADE_S = 0.005  # a few ms of fade in and out: an abrupt start or stop clicks


@dataclass(frozen=True)
class Cue:
    """A cue: ``notes`` are (frequency Hz, seconds) with 0 Hz meaning a rest; ``pan`` -1 left .. +1 right."""

    notes: tuple[tuple[float, float], ...]
    pan: float = 0.0


CUES: dict[str, Cue] = {
    # Two low beeps on the left, three quick high beeps on the right, one longer middle tone for the
    # centre: three rhythms and three pitches.
    "left": Cue(((392.0, 0.08), (0.0, 0.05), (392.0, 0.08)), pan=-0.8),
    "right": Cue(((784.0, 0.05), (0.0, 0.035), (784.0, 0.05), (0.0, 0.035), (784.0, 0.05)), pan=0.8),
    "centre": Cue(((523.3, 0.22),)),
    # A rising arpeggio for a win; a falling high-low pair, three times, when the referee needs someone.
    "win": Cue(((523.3, 0.1), (659.3, 0.1), (784.0, 0.1), (1046.5, 0.3))),
    "attention": Cue(((880.0, 0.07), (660.0, 0.07)) * 3),
}
ALIASES = {"l": "left", "c": "centre", "center": "centre", "r": "right"}


def cue_name(name: str) -> str:
    """The canonical cue name for ``name`` (faces L, C, R are accepted), or a UserError listing the cues.

    >>> cue_name("C"), cue_name("win")
    ('centre', 'win')
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in CUES:
        raise UserError(f"unknown sound {name!r}: the sounds are {', '.join(sorted(CUES))}")
    return key


def cue_samples(name: str, *, rate: int = SAMPLE_RATE, volume: float = 0.6) -> np.ndarray:
    """Stereo int16 samples (frames x 2) of the cue ``name`` at ``volume`` (0..1 of full scale)."""
    cue = CUES[cue_name(name)]
    parts = []
    for freq, seconds in cue.notes:
        t = np.arange(int(round(seconds * rate))) / rate
        if freq <= 0:
            parts.append(np.zeros_like(t))
            continue
        # A little of the octave makes the tone easier to hear on small speakers than a bare sine.
        tone = np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t)
        fade = np.minimum(1.0, np.minimum(t, t[::-1]) / _FADE_S)
        parts.append(tone * fade / 1.3)
    mono = np.concatenate(parts) * volume
    left_gain, right_gain = np.sqrt((1 - cue.pan) / 2), np.sqrt((1 + cue.pan) / 2)  # equal-power pan
    stereo = np.stack([mono * left_gain, mono * right_gain], axis=1) * np.sqrt(2)
    return np.clip(stereo * 32767, -32768, 32767).astype(np.int16)


def write_wav(path: str | Path, samples: np.ndarray, rate: int = SAMPLE_RATE) -> Path:
    """Write int16 samples (frames, or frames x channels) as a WAV file; returns the path."""
    path = Path(path)
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.ascontiguousarray(samples, dtype="<i2").tobytes())
    return path


def write_cue(path: str | Path, name: str) -> Path:
    """Write the cue ``name`` to ``path`` as a WAV file."""
    return write_wav(path, cue_samples(name))
