"""Speaking the referee's sentences: espeak-ng from a background queue, or printed words without it.

The camera loop hands sentences over with :meth:`Speaker.say` and goes straight back to watching the
tray; a worker thread runs one espeak-ng process per sentence, in order. A player's "repeat" or "undo"
cuts the current sentence and drops the queue (:meth:`Speaker.stop_talking`), so stale news is never
read out after the correction. A press of choose drops only the prompts (:meth:`Speaker.drop_prompts`):
the names offered before it and the Wild explanation, not the roll's words queued around them.

Speech must never stop a game: if espeak-ng is missing the words are printed (and the table is told once
how to turn speech on); if it fails mid-game (a crash, a process that hangs) the speaker says so once and
prints, and tries espeak-ng again with a sentence every :data:`RETRY_SECONDS`. When it fails because no
sound card is there (yet: at power-on a USB speaker or HDMI audio often appears seconds after the service
starts; or a speaker unplugged), the words are printed and also held, and the speaker tries the sound card
again on its own, every :data:`DEVICE_RETRY_FAST_SECONDS` for the first :data:`DEVICE_FAST_WINDOW_SECONDS`
of the silence, then every :data:`DEVICE_RETRY_SECONDS`. When sound comes, the table hears what it missed
and still matters: the words held are dropped as queued words are (a roll counted meanwhile drops the
turn words before it, :meth:`EspeakSpeaker.skip_queued`; the table's own words, :meth:`EspeakSpeaker.say_kept`,
are kept), at most :data:`HELD_LIMIT` sentences, each once. A sentence may take at most a generous time
for its words (:func:`speaking_time_limit`); a hung espeak-ng or aplay is killed, so later sentences are
not stuck behind it.

>>> import io
>>> out = io.StringIO()
>>> speaker = PrintSpeaker(out)
>>> speaker.say("Ann, your turn: roll three dice.")
>>> print(out.getvalue(), end="")
SAY: Ann, your turn: roll three dice.
>>> speaker.spoken
['Ann, your turn: roll three dice.']
"""

from __future__ import annotations

import functools
import logging
import math
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Protocol, TextIO

from lcr_pi.errors import UserError
from lcr_pi.outputs import sounds

log = logging.getLogger(__name__)

MIN_RATE_WPM = 80
MAX_RATE_WPM = 450  # espeak-ng's own ceiling; fast listeners use 300-450
INSTALL_HINT = "sudo apt install espeak-ng"
RETRY_SECONDS = 30.0  # after speech failed, espeak-ng is tried again this long after the last failure
NO_SOUND_CARD = "found no sound card"  # the problem _problem() names when ALSA finds no device (yet)
DEVICE_RETRY_FAST_SECONDS = 1.5  # no sound card: tried again this often at first (a card coming up at boot)
DEVICE_FAST_WINDOW_SECONDS = 60.0  # ... for this long after the silence began
DEVICE_RETRY_SECONDS = 10.0  # ... then this often (a speaker plugged in later)
HELD_LIMIT = 12  # sentences held for the table while there is no sound card (the oldest turn words go first)
POLL_SECONDS = 0.25  # while words are held, the worker looks at the clock this often (real time)
CUE_TIME_LIMIT = 5.0  # seconds a cue sound may take before it is taken for hung


def speaking_time_limit(text: str, rate_wpm: int) -> float:
    """Seconds one sentence may take: three times its words at the speaking rate, plus 10 s to start.

    >>> round(speaking_time_limit("Ann rolled L, dot, C.", 175), 1)   # five words
    15.1
    """
    return 10.0 + 3.0 * len(text.split()) * 60.0 / max(MIN_RATE_WPM, rate_wpm)


class Speaker(Protocol):
    """What the referee needs from a voice. ``spoken`` lists sentences in the order they were spoken."""

    spoken: list[str]

    def say(self, text: str) -> None:
        """Queue ``text``; returns at once."""

    def say_kept(self, text: str) -> None:
        """Queue ``text`` as :meth:`say` does, never dropped by :meth:`skip_queued`: the table's own words
        (a warning said once, the camera lost), which no roll makes stale."""

    def say_prompt(self, text: str) -> None:
        """Queue ``text`` as :meth:`say` does, as a question a later :meth:`drop_prompts` makes stale
        (the Wild choice's explanation, a name offered to choose)."""

    def say_about_prompt(self, text: str) -> None:
        """Queue ``text``, words about the prompt queued before it (a press of confirm that came too soon
        for the guess offered): :meth:`drop_prompts` drops it as a prompt, but it is no new prompt that
        :meth:`seconds_since_prompt` times. Optional."""

    def seconds_since_prompt(self) -> float | None:
        """Seconds since the last prompt queued (:meth:`say_prompt`) began to be said, or was dropped
        unsaid; None while it still waits behind other words; ``math.inf`` when none was ever queued.
        Optional: the table takes a press of confirm for an offered guess only once its words could
        have been heard."""

    def cue(self, sound: str) -> None:
        """Queue a short sound: "left", "centre", "right", "win" or "attention"."""

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait until everything queued has been spoken; False if ``timeout`` seconds passed first."""

    def stop_talking(self) -> None:
        """Cut the current sentence and drop everything queued."""

    def skip_queued(self) -> None:
        """Drop everything queued that has not begun; the sentence being spoken ends as it would."""

    def drop_prompts(self) -> None:
        """Drop what :meth:`say_prompt` queued and has not begun, and cut it if it is being spoken; the
        other words, queued before or after, are said as they would be."""

    def close(self) -> None:
        """Stop at once and release the worker (call :meth:`wait_until_idle` first to finish talking)."""


class PrintSpeaker:
    """Prints each sentence as ``SAY: ...``: the voice of a laptop without espeak-ng, and the fallback."""

    def __init__(self, stream: TextIO | None = None, prefix: str = "SAY: "):
        self.stream = stream
        self.prefix = prefix
        self.spoken: list[str] = []
        self.cues: list[str] = []  # a terminal cannot beep usefully; kept so the order can be checked
        self._prompted_at = -math.inf

    def say(self, text: str) -> None:
        self.spoken.append(text)
        print(f"{self.prefix}{text}", file=self.stream or sys.stdout, flush=True)

    def say_kept(self, text: str) -> None:
        self.say(text)

    def say_prompt(self, text: str) -> None:
        self.say(text)
        self._prompted_at = time.monotonic()

    def say_about_prompt(self, text: str) -> None:
        self.say(text)

    def seconds_since_prompt(self) -> float | None:
        return time.monotonic() - self._prompted_at  # printed at once

    def cue(self, sound: str) -> None:
        self.cues.append(sounds.cue_name(sound))

    def wait_until_idle(self, timeout: float) -> bool:
        return True

    def stop_talking(self) -> None:
        pass

    def skip_queued(self) -> None:
        pass

    def drop_prompts(self) -> None:
        pass

    def close(self) -> None:
        pass


def validate_rate(rate_wpm) -> int:
    """
    >>> validate_rate(300)
    300
    >>> validate_rate(600)
    Traceback (most recent call last):
    lcr_pi.errors.UserError: speech rate 600 words per minute is out of range: use 80 to 450
    """
    # is_integer, not int(): int() of an infinite or NaN rate (JSON's 1e999, NaN) raises, a 500 on the page
    if isinstance(rate_wpm, bool) or not isinstance(rate_wpm, int | float) or (
            isinstance(rate_wpm, float) and not rate_wpm.is_integer()):
        raise UserError(f"speech rate must be a whole number of words per minute, got {rate_wpm!r}")
    if not MIN_RATE_WPM <= rate_wpm <= MAX_RATE_WPM:
        raise UserError(
            f"speech rate {rate_wpm} words per minute is out of range: use {MIN_RATE_WPM} to {MAX_RATE_WPM}"
        )
    return int(rate_wpm)


def validate_volume(volume) -> int:
    """Volume 0..100 as espeak-ng's amplitude 0..200 (its default, 100, is volume 50).

    >>> validate_volume(100), validate_volume(50), validate_volume(0)
    (200, 100, 0)
    """
    if isinstance(volume, bool) or not isinstance(volume, int | float):
        raise UserError(f"speech volume must be a number from 0 to 100, got {volume!r}")
    if not 0 <= volume <= 100:
        raise UserError(f"speech volume {volume} is out of range: use 0 (silent) to 100 (loudest)")
    return round(volume * 2)


@functools.lru_cache(maxsize=4)
def available_voices(program: str = "espeak-ng") -> tuple[frozenset[str], frozenset[str]]:
    """(voices, variants) that ``program`` knows, lower-cased: languages, voice names and voice files."""

    def table(*args: str) -> list[list[str]]:
        out = subprocess.run([program, *args], capture_output=True, text=True, timeout=10, check=False)
        return [line.split() for line in out.stdout.splitlines()[1:] if line.strip()]

    voices: set[str] = set()
    for cols in table("--voices"):
        if len(cols) >= 5:  # Pty, Language, Age/Gender, VoiceName, File, (other languages)
            # The listing writes spaces in voice names as "_"; espeak-ng -v wants the spaces.
            voices.update({cols[1], cols[3].replace("_", " "), cols[4], cols[4].rsplit("/", 1)[-1]})
    variants: set[str] = set()
    for cols in table("--voices=variant"):
        if len(cols) >= 5:
            variants.update({cols[3].replace("_", " "), cols[4].rsplit("/", 1)[-1]})
    return frozenset(v.lower() for v in voices), frozenset(v.lower() for v in variants)


def validate_voice(voice: str, program: str = "espeak-ng") -> str:
    """Check ``voice`` (e.g. "en", "en-us", "en-gb+f3") against ``espeak-ng --voices``."""
    if not isinstance(voice, str) or not voice.strip():
        raise UserError(f"speech voice must be a name such as 'en' or 'en-us+f3', got {voice!r}")
    voice = voice.strip()
    base, _, variant = voice.partition("+")
    voices, variants = available_voices(program)
    if base.lower() not in voices:
        english = sorted(v for v in voices if v.startswith("en"))
        raise UserError(
            f"unknown speech voice {base!r}: `{program} --voices` lists the voices "
            f"(English ones: {', '.join(english)})"
        )
    if variant and variant.lower() not in variants:
        raise UserError(
            f"unknown voice variant {variant!r} in {voice!r}: `{program} --voices=variant` lists them "
            "(for example m3, f2, klatt)"
        )
    return voice


def voice_or_fallback(voice: str, program: str = "espeak-ng") -> tuple[str | None, str | None]:
    """``(voice to speak with, problem)``: the voice when espeak-ng knows it (or is not installed, so
    that :func:`make_speaker` prints the words and says how to install it); else "en" and why; else
    (an espeak-ng that lists no voices: installed but broken) None, for printed words, and why. A
    table without a screen must hear its game, never exit silently over a voice's name."""
    if shutil.which(program) is None:
        return voice, None
    try:
        return validate_voice(voice, program), None
    except UserError as exc:
        try:
            validate_voice("en", program)
        except UserError:
            return None, ("espeak-ng lists no voices, so it cannot speak; the words are printed. Reinstall it: "
                          "sudo apt install --reinstall espeak-ng espeak-ng-data")
        return "en", f"[speech] voice: {exc}; speaking with the voice 'en'"


class EspeakSpeaker:
    """Speaks through the real espeak-ng from a background thread.

    ``output_dir`` writes each utterance to a numbered WAV file (``0001.wav``, ``0002.wav``, ...; a cue
    is ``0003-left.wav``) instead of the sound card: the tests listen that way. ``player`` plays the cue
    sounds (aplay, from alsa-utils); without it cues are skipped and speech goes on.
    """

    def __init__(
        self,
        voice: str = "en",
        rate_wpm: int = 175,
        volume: float = 100,
        sounds: bool = True,
        *,
        output_dir: str | Path | None = None,
        program: str = "espeak-ng",
        player: str | None = "aplay",
        stream: TextIO | None = None,
        echo: bool = False,
    ):
        if shutil.which(program) is None:
            raise UserError(f"{program} is not installed: {INSTALL_HINT}")
        self.rate_wpm = validate_rate(rate_wpm)
        self.amplitude = validate_volume(volume)
        self.voice = validate_voice(voice, program)
        self.program = program
        self.sounds = sounds
        self.echo = echo  # also print each sentence as it is spoken (the demo shows and says)
        self.player = shutil.which(player) if player else None
        self.output_dir = Path(output_dir) if output_dir is not None else None
        if self.output_dir is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        self.spoken: list[str] = []
        #: Everything performed, in order: ("say", text) or ("cue", name); dropped items never appear.
        self.history: list[tuple[str, str]] = []
        self.failure: str | None = None  # why speech fell back to printing, while it has
        self._failed_at = 0.0  # time.monotonic() of the last failure
        self._silence_began = 0.0  # self.clock() when the failure began (no sound card: fast retries at first)
        #: Sentences not heard for want of a sound card, said when it comes: queue items, in order.
        self._held: list[tuple] = []
        #: Sentences said late, when the sound card came (the catch-up), in order.
        self.caught_up: list[str] = []
        self.clock = time.monotonic
        self._printer = PrintSpeaker(stream)
        self._cue_dir: tempfile.TemporaryDirectory | None = None
        self._cues_broken = False
        self._files_written = 0
        self._lock = threading.Lock()  # guards generation, current process, histories
        self._generation = 0  # bumped by stop_talking: queued items of older generations are dropped
        self._current: subprocess.Popen | None = None
        self._pending = 0
        self._queued = 0  # items ever queued: each is numbered, so that skip_queued knows which waited
        self._skip_through = 0  # skip_queued: the items numbered up to this one are dropped unsaid
        self._prompts_through = 0  # drop_prompts: the prompts numbered up to this one are dropped or cut
        self._current_is_prompt = False  # the process running says a prompt (drop_prompts cuts it)
        self._last_prompt = 0  # the number of the last prompt queued
        self._prompt_reached = 0  # the number of the last prompt the worker began (or dropped unsaid)
        self._prompt_reached_at = -math.inf  # self.clock() then
        self._untimed: set[int] = set()  # the numbers of words about a prompt queued (say_about_prompt), not begun
        self._idle = threading.Condition()
        self._queue: queue.Queue = queue.Queue()
        self._closed = False
        self._worker = threading.Thread(target=self._run, name="espeak-speaker", daemon=True)
        self._worker.start()

    # -- the caller's side: never blocks on audio -------------------------------------------------------

    def say(self, text: str) -> None:
        text = " ".join(str(text).split())
        if text:
            self._enqueue("say", text)

    def say_kept(self, text: str) -> None:
        text = " ".join(str(text).split())
        if text:
            self._enqueue("say", text, kept=True)

    def say_prompt(self, text: str) -> None:
        text = " ".join(str(text).split())
        if text:
            self._enqueue("say", text, prompt=True)

    def say_about_prompt(self, text: str) -> None:
        text = " ".join(str(text).split())
        if text:
            self._enqueue("say", text, prompt=True, timed=False)

    def cue(self, sound: str) -> None:
        name = sounds.cue_name(sound)
        if self.sounds:
            self._enqueue("cue", name)

    def stop_talking(self) -> None:
        with self._lock:
            self._generation += 1
            if self._current is not None and self._current.poll() is None:
                self._current.kill()

    def skip_queued(self) -> None:
        """Drop everything queued that has not begun, but what :meth:`say_kept` queued; the sentence being
        spoken ends as it would (a new roll makes the words still waiting stale, but a sentence cut off
        mid-word is only noise)."""
        with self._idle:
            self._skip_through = self._queued

    def drop_prompts(self) -> None:
        """Drop the prompts (:meth:`say_prompt`) queued so far that have not begun, and cut the one being
        spoken: a player who pressed choose again hears the next name at once, and never a stale name
        that confirm would no longer take. The other words, queued before or after, are all said."""
        with self._idle:
            through = self._queued
        with self._lock:
            self._prompts_through = through
            if self._current_is_prompt and self._current is not None and self._current.poll() is None:
                self._current.kill()

    def seconds_since_prompt(self) -> float | None:
        with self._idle:
            if self._prompt_reached < self._last_prompt:
                return None  # still waiting to be said
            return self.clock() - self._prompt_reached_at

    def wait_until_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.stop_talking()
        self._queue.put(None)
        self._worker.join(timeout=5)
        if self._cue_dir is not None:
            self._cue_dir.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _enqueue(self, kind: str, payload: str, *, kept: bool = False, prompt: bool = False,
                 timed: bool = True) -> None:
        if self._closed:
            raise RuntimeError("the speaker is closed")
        with self._idle:
            self._pending += 1
            self._queued += 1
            if prompt and timed:
                self._last_prompt = self._queued
            elif prompt:
                self._untimed.add(self._queued)
            # The generation is read without self._lock, which the worker holds while it starts a
            # process: say() must not wait.
            self._queue.put((self._generation, self._queued, kind, payload, kept, prompt))

    # -- the worker's side -----------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                # While words wait for a sound card, the worker wakes to try it again on its own: at
                # power-on nothing else may be said for minutes after the welcome.
                item = self._queue.get(timeout=POLL_SECONDS if self._held else None)
            except queue.Empty:
                item = ()
            if item is None:
                break
            try:
                if item:
                    self._perform(*item)
                if self._held and self.clock() >= self._next_device_try():
                    self._say_held()
            except Exception as exc:  # a bug here must not silence the rest of the game
                log.exception("speech worker error")
                self._fail(f"internal error: {exc}")
            finally:
                if item:
                    with self._idle:
                        self._pending -= 1
                        self._idle.notify_all()
        with self._idle:
            self._pending = 0
            self._idle.notify_all()

    def _dropped(self, generation: int, number: int, kept: bool, prompt: bool) -> bool:
        """Whether stop_talking, skip_queued or drop_prompts dropped this item (call under self._lock)."""
        return (generation != self._generation or (number <= self._skip_through and not kept)
                or (prompt and number <= self._prompts_through))

    def _no_sound_card(self) -> bool:
        return self.failure is not None and self.failure.endswith(NO_SOUND_CARD)

    def _next_device_try(self) -> float:
        """When the sound card is tried again: often at first after the silence began, then less often."""
        fast = self._failed_at - self._silence_began < DEVICE_FAST_WINDOW_SECONDS
        return self._failed_at + (DEVICE_RETRY_FAST_SECONDS if fast else DEVICE_RETRY_SECONDS)

    def _hold(self, item: tuple) -> None:
        """Keep a sentence not heard for want of a sound card (call under self._lock): at most HELD_LIMIT,
        the oldest turn words dropped first (the table's own words are kept longest), each text once."""
        self._held = [held for held in self._held
                      if not self._dropped(*held[:2], *held[4:]) and held[3] != item[3]]
        self._held.append(item)
        while len(self._held) > HELD_LIMIT:
            turn_words = [held for held in self._held if not held[4]]
            self._held.remove(turn_words[0] if turn_words else self._held[0])

    def _say_held(self) -> None:
        """Try the sound card with the words held: said in order, those dropped meanwhile skipped; if it
        is still missing, they wait for the next try."""
        with self._lock:
            self._held = [held for held in self._held if not self._dropped(*held[:2], *held[4:])]
            if not self._held:
                return
            log.info("trying the sound card again with %d sentences held", len(self._held))
        while True:
            with self._lock:
                if not self._held:
                    break
                generation, number, _, payload, kept, prompt = item = self._held[0]
                if self._dropped(generation, number, kept, prompt):
                    self._held.pop(0)
                    continue
            heard = self._speak(item, printed=True, retrying=True)
            with self._lock:
                if self._held and self._held[0] is item:
                    self._held.pop(0)
                if heard:
                    if not self._dropped(generation, number, kept, prompt):  # not cut on purpose
                        self.caught_up.append(payload)
                elif self._no_sound_card() and not self._dropped(generation, number, kept, prompt):
                    self._held.insert(0, item)  # still no sound card: it waits for the next try
                    return
                else:
                    self._held.clear()  # another failure: printed already, as every sentence then
                    return

    def _perform(self, generation: int, number: int, kind: str, payload: str, kept: bool, prompt: bool) -> None:
        if prompt:
            with self._idle:  # reached: said from now on, or dropped (seconds_since_prompt)
                if number in self._untimed:  # words about the prompt before (say_about_prompt): not timed
                    self._untimed.discard(number)
                else:
                    self._prompt_reached, self._prompt_reached_at = number, self.clock()
        with self._lock:
            if self._dropped(generation, number, kept, prompt):
                return  # dropped by stop_talking, skip_queued or drop_prompts
            if kind == "say":
                self.spoken.append(payload)
            self.history.append((kind, payload))
            if kind == "cue" and self._no_sound_card():
                return  # a cue for news the table may never hear in its time: not held
            retrying = False
            if kind == "say" and (self.failure is not None or self.echo):
                self._printer.say(payload)
                if self._no_sound_card():
                    self._hold((generation, number, kind, payload, kept, prompt))
                    return  # tried with the words held, when it is time (_run)
                if self.failure is not None:
                    if self.clock() - self._failed_at < RETRY_SECONDS:
                        return
                    retrying = True  # printed already; espeak-ng is tried again with this sentence
        item = (generation, number, kind, payload, kept, prompt)
        if not self._speak(item, printed=retrying or (kind == "say" and self.echo), retrying=retrying) \
                and kind == "say" and self._no_sound_card():
            with self._lock:
                if not self._dropped(generation, number, kept, prompt):
                    self._hold(item)  # not heard: said when the sound card comes

    def _speak(self, item: tuple, *, printed: bool, retrying: bool) -> bool:
        """Run espeak-ng (or the cue's player) for one item; True if it was heard (or cut on purpose, or
        skipped). A failure is reported: the sentence printed unless ``printed``."""
        generation, number, kind, payload, kept, prompt = item
        with self._lock:
            if self._dropped(generation, number, kept, prompt):
                return True
            if kind == "say":
                command = [self.program, "-v", self.voice, "-s", str(self.rate_wpm), "-a", str(self.amplitude),
                           "-b", "1", "--stdin"]
                if self.output_dir is not None:
                    command += ["-w", str(self._next_file(""))]
                text = payload
            else:
                command = self._cue_command(payload)
                if command is None:
                    return True
                text = None
            try:
                # Started under the lock so that stop_talking either sees it and kills it, or bumps the
                # generation before it starts (and then it is never started).
                self._current = process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE if text is not None else subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                self._current_is_prompt = prompt
            except OSError as exc:
                self._current = None
                self._report(kind, payload, f"could not start {command[0]}: {exc}", printed=printed)
                return False
        limit = speaking_time_limit(payload, self.rate_wpm) if text is not None else CUE_TIME_LIMIT
        try:
            _, err = process.communicate(text.encode("utf-8") if text is not None else None, timeout=limit)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            with self._lock:
                self._current, self._current_is_prompt = None, False
                if generation == self._generation:
                    self._report(kind, payload, f"{command[0]} did not finish within {limit:.0f} s", printed=printed)
                    return False
            return True
        with self._lock:
            self._current, self._current_is_prompt = None, False
            if generation != self._generation or (prompt and number <= self._prompts_through):
                return True  # cut short on purpose
            problem = _problem(process.returncode, err)
            if problem:
                self._report(kind, payload, f"{command[0]} {problem}", printed=printed)
                return False
            if retrying and kind == "say" and self.failure is not None:
                log.warning("speech is back (it had failed: %s)", self.failure)
                self.failure = None
                print("Speech is back.", file=self._printer.stream or sys.stdout, flush=True)
            return True

    def _report(self, kind: str, payload: str, problem: str, *, printed: bool = False) -> None:
        """A failed sentence falls back to print (it is printed, not lost); a failed cue just stops cues."""
        if kind == "say":
            self._fail(problem)
            if not self.echo and not printed:  # echoed or printed already
                self._printer.say(payload)
        elif problem.endswith(NO_SOUND_CARD):
            log.warning("a cue sound was not played: %s", problem)  # cues come back with the sound card
        elif not self._cues_broken:
            self._cues_broken = True
            log.warning("cue sounds failed: %s", problem)
            print(f"Cue sounds are off ({problem}).", file=self._printer.stream or sys.stdout, flush=True)

    def _fail(self, problem: str) -> None:
        self._failed_at = self.clock()
        if self.failure is not None and self._no_sound_card() != problem.endswith(NO_SOUND_CARD):
            self.failure = None  # another kind of failure now: said as such
        if self.failure is None:
            self.failure = problem
            self._silence_began = self._failed_at
            log.error("speech failed: %s", problem)
            if problem.endswith(NO_SOUND_CARD):
                print(f"Speech failed ({problem}); printing the words instead, and trying the sound card again "
                      f"every {DEVICE_RETRY_FAST_SECONDS:g} seconds for a minute, then every "
                      f"{DEVICE_RETRY_SECONDS:g} seconds. When it comes, what the table missed is said.",
                      file=self._printer.stream or sys.stdout, flush=True)
            else:
                print(f"Speech failed ({problem}); printing the words instead, and trying again every "
                      f"{RETRY_SECONDS:.0f} seconds.", file=self._printer.stream or sys.stdout, flush=True)

    def _next_file(self, suffix: str) -> Path:
        self._files_written += 1
        assert self.output_dir is not None
        return self.output_dir / f"{self._files_written:04d}{suffix}.wav"

    def _cue_command(self, name: str) -> list[str] | None:
        if self.output_dir is not None:
            sounds.write_cue(self._next_file(f"-{name}"), name)
            return None
        if self.player is None or self._cues_broken:
            return None
        if self._cue_dir is None:
            self._cue_dir = tempfile.TemporaryDirectory(prefix="lcr-pi-cues-")
        path = Path(self._cue_dir.name) / f"{name}.wav"
        if not path.exists():
            sounds.write_cue(path, name)
        return [self.player, "-q", str(path)]


def _problem(returncode: int, stderr: bytes) -> str | None:
    """Why a run failed, or None. espeak-ng exits 0 even when ALSA finds no sound card, so read stderr."""
    message = stderr.decode("utf-8", "replace").strip()
    if "cannot find card" in message or "audio open error" in message:
        return "found no sound card"
    if returncode != 0:
        return f"exited with status {returncode}: {_last_line(message)}"
    if "error" in message.lower():
        return f"reported: {_last_line(message)}"
    return None


def _last_line(message: str) -> str:
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


_told_speech_off = False


def make_speaker(
    voice: str = "en",
    rate_wpm: int = 175,
    volume: float = 100,
    sounds: bool = True,
    *,
    output_dir: str | Path | None = None,
    program: str = "espeak-ng",
    stream: TextIO | None = None,
    echo: bool = False,
) -> Speaker:
    """espeak-ng when it is installed, else a :class:`PrintSpeaker` (telling the table once, per run).

    Rate and volume are checked either way, so a bad config is caught on the laptop, not at the table.
    ``echo`` prints each sentence as espeak-ng speaks it, too.
    """
    global _told_speech_off
    validate_rate(rate_wpm)
    validate_volume(volume)
    if shutil.which(program) is not None:
        return EspeakSpeaker(voice, rate_wpm, volume, sounds, output_dir=output_dir, program=program,
                             stream=stream, echo=echo)
    if not _told_speech_off:
        _told_speech_off = True
        print(f"Speech is off: {program} is not installed, so the words are printed. "
              f"To hear them: {INSTALL_HINT}", file=stream or sys.stdout, flush=True)
    return PrintSpeaker(stream)
