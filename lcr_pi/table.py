"""The thin shell around the referee: carries out its outputs and feeds it rolls and button presses.

Speech, lights, storage and dice sources are passed in, so the same loop runs on the Pi (espeak-ng,
gpiozero LEDs, the camera), on a laptop (printed words, LEDs drawn in the terminal, typed rolls) and in
tests (WAV files, gpiozero's MockFactory, synthetic frames).
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lcr_pi.announce import as_sentence, capitalised, without_leds
from lcr_pi.errors import UserError
from lcr_pi.rules.faces import roll_tokens
from lcr_pi.persist import GameStore
from lcr_pi.referee import (
    Attention,
    Celebrate,
    Checkpoint,
    Cue,
    KeepEvidence,
    NewPlayers,
    Prompt,
    Referee,
    RollObservation,
    Say,
    ShowMoves,
    ShowTurn,
)

log = logging.getLogger("lcr_pi.table")


class NoLights:
    """Lights for a table without LEDs: every cue is a no-op."""

    def show_turn(self, seat): ...
    def show_moves(self, moves, then_turn=None): ...
    def celebrate(self, seat): ...
    def attention(self): ...
    def off(self): ...
    def close(self): ...


@dataclass(frozen=True)
class Announcement(Say):
    """Words of the table's own (a warning, a hint, the camera lost or back), not a turn's: a new roll
    does not make them stale, so ``skip_stale_words`` never drops them (the speaker's ``say_kept``)."""


@dataclass(frozen=True)
class AboutPrompt(Say):
    """Words about the prompt said before them (a press of confirm that came too soon for the guess offered):
    a new throw drops them with it, and they are no new question that a press of confirm must wait for
    (the speaker's ``say_about_prompt``)."""


class Table:
    """Carries out the referee's outputs on the speaker, the lights and the store."""

    def __init__(
        self,
        referee: Referee,
        *,
        speaker,
        lights=None,
        store: GameStore | None = None,
        sounds: bool = True,
        encode_evidence: Callable[[RollObservation], bytes | None] | None = None,
        on_words: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        skip_stale_words: bool = False,
        remember_players: Callable[[tuple[str, ...]], None] | None = None,
        confirm_reaction: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        """``skip_stale_words``: a roll counted while words of the turns before it still wait to be
        said drops those words (``speaker.skip_queued()``; the sentence being spoken is finished), so
        that a table rolling faster than the speaker talks hears each roll as it comes. Found by an
        audit: a roll's words take about 9 s to say at 175 words a minute (14 s in a Wild game), and
        at a roll every 8 s eight players heard the rolls ten minutes late after 160 rolls, further
        behind with every roll. ``lcr-pi run`` sets it; the demo and tests that hear every sentence
        do not. ``remember_players(names)``: keeps players changed at the table (from the scoreboard page)
        for the next power-on (``lcr-pi run`` writes them to the remembered setup); it raises
        :class:`UserError` when it cannot, and the table is told. ``confirm_reaction``: a press of
        confirm for an unsure read's guess is taken only once the guess's words began to be said at
        least this many seconds ago (``lcr-pi run`` sets it; None: at once, for the demo's pretend
        player who sees the dice, and for tests), timed by ``monotonic`` (not ``clock``, the wall clock the
        log is stamped with: a Pi without a network sets its clock back or forth when it finds one)."""
        self.referee = referee
        self.speaker = speaker
        self.lights = lights if lights is not None else NoLights()
        self.store = store
        self.sounds = sounds
        self.encode_evidence = encode_evidence
        self.on_words = on_words
        self.clock = clock
        self.skip_stale_words = skip_stale_words
        self.remember_players = remember_players
        self.confirm_reaction = confirm_reaction
        self.monotonic = monotonic
        self._offered_at = -math.inf  # self.monotonic() when the guess offered now was offered
        self._guess_said_at = None  # self.monotonic() when the words of the guess offered now first began
        self._told_too_soon = None  # the offer (referee.offer_number) a press of confirm came too soon for, told
        self._storage_warned: set[str] = set()  # what the table was told is not kept, once each
        #: Called as ``listener(outputs, referee)`` after each batch of outputs is carried out (the
        #: scoreboard page listens here). Listeners must return quickly and must not raise.
        self.listeners: list[Callable[[list, Referee], None]] = []
        self.last_evidence: Path | None = None

    # -- outputs ----------------------------------------------------------------------------------

    def perform(self, outputs) -> None:
        outputs = list(outputs)
        # Storage first (the roll's photo, as before, then the save): a move the table hears, and
        # carries out with real chips, must already be on the card when the plug is pulled (found by
        # an audit: the words were queued, or printed, before the save). The snapshot is the
        # referee's state after the whole batch either way; only the words wait for it.
        # New players take their seats on the lights before the new game's turn is lit, and are
        # remembered before the new game is saved: a plug pulled between the two then starts a new game
        # with them (the saved one, for other players and with nothing in play, is replaced) rather than
        # one with the players before. What that cannot do is said after the batch's own words.
        ordered = sorted(outputs, key=lambda out: (not isinstance(out, NewPlayers),
                                                   not isinstance(out, (KeepEvidence, Checkpoint))))
        afterwards: list[str] = []
        for out in ordered:
            if isinstance(out, NewPlayers):
                afterwards += self._seat_new_players(out.names)
                continue
            try:
                self._perform_one(out)
            except (UserError, OSError) as exc:
                # Only storage raises here (the speaker and the lights handle their own failures):
                # a full card, a folder left read-only. The game goes on, and says what is not kept.
                lost = ("the photos of the rolls are not being kept" if isinstance(out, KeepEvidence)
                        else "it is not being saved")
                self._storage_problem(str(exc) if isinstance(exc, UserError)
                                      else f"cannot write to the card ({exc.strerror or exc})", lost)
        for listener in self.listeners:
            try:
                listener(outputs, self.referee)
            except Exception:  # noqa: BLE001 - a broken page must never stop the game
                log.exception("a listener failed")
        for text in afterwards:
            self.announce(text)

    def _seat_new_players(self, names: tuple[str, ...]) -> list[str]:
        """Give the new players their seats' lights and remember them; the warnings to say."""
        warnings = []
        reseat = getattr(self.lights, "reseat", None)
        without = reseat(names) if reseat is not None else []
        if without:
            # The LEDs in use were fitted to the players at start-up; the next start fits those wired to
            # the players remembered (and says so if there are too few). "Until the Pi is started again"
            # would promise an LED that may not be wired (found by a review).
            said = capitalised(without_leds(without, first_seat=len(names) - len(without) + 1))
            warnings.append(f"{said} now: the LEDs are fitted to the players when the Pi starts.")
        if self.remember_players is not None:
            try:
                self.remember_players(names)
            except UserError as exc:
                log.error("%s", exc)
                warnings.append(f"Warning: {as_sentence(str(exc))} The new players are kept until the Pi is "
                                "turned off, not after.")
        return warnings

    def _perform_one(self, out) -> None:
        if isinstance(out, Say):
            say = self.speaker.say
            if isinstance(out, Announcement):
                say = getattr(self.speaker, "say_kept", say)
            elif isinstance(out, Prompt):
                say = getattr(self.speaker, "say_prompt", say)
            elif isinstance(out, AboutPrompt):
                say = getattr(self.speaker, "say_about_prompt", say)
            say(out.text)
            if self.on_words:
                self.on_words(out.text)
        elif isinstance(out, Cue):
            if self.sounds:
                self.speaker.cue(out.sound)
        elif isinstance(out, ShowTurn):
            self.lights.show_turn(out.seat)
        elif isinstance(out, ShowMoves):
            self.lights.show_moves(out.moves, then_turn=out.next_seat)
        elif isinstance(out, Celebrate):
            self.lights.celebrate(out.seat)
        elif isinstance(out, Attention):
            self.lights.attention()
            if self.sounds:
                self.speaker.cue("attention")
        elif isinstance(out, Checkpoint):
            if self.store is not None:
                self.store.save(self.referee.snapshot())
                self.store.log({"time": round(self.clock(), 3), **out.record})
        elif isinstance(out, KeepEvidence):
            if self.store is not None and self.encode_evidence is not None:
                jpeg = self.encode_evidence(out.observation)
                if jpeg:
                    self.last_evidence = self.store.keep_evidence(f"{out.label}.jpg", jpeg)

    def announce(self, text: str) -> None:
        """Say something that is not the referee's (a warning, a hint) through the same outputs, so the
        scoreboard's live region hears it too. A roll does not drop it as stale (:class:`Announcement`)."""
        self.perform([Announcement(text)])

    def _storage_problem(self, message: str, lost: str = "it is not being saved") -> None:
        # A full or read-only card must not stop the game: say it once, log it every time.
        log.error("%s", message)
        if lost not in self._storage_warned:
            self._storage_warned.add(lost)
            self.announce(f"Warning: {message}. The game goes on, but {lost}.")

    # -- inputs -----------------------------------------------------------------------------------

    def start(self) -> None:
        self.perform(self.referee.start())

    def roll_seen(self, obs: RollObservation) -> None:
        counted = self.referee.turn_label
        offered = self.referee.offered_guess
        outputs = self.referee.on_roll(obs)
        if offered is not None and obs.verdict not in ("no_dice", "obstructed"):
            # The dice were thrown again: the guess offered for the dice before is stale, and its words
            # still waiting (or being said) are dropped. Found by a review: they were said after the
            # new roll was read, and a helper who heard "if the dice show L, dot and R, press confirm"
            # and saw that on the new dice pressed confirm, which took the new, unheard guess.
            self._drop_prompts()
        self._skip_stale_words(counted)
        self.perform(outputs)
        if self.referee.offered_guess is not None and self.referee.offered_guess is not offered:
            self._offered_at, self._guess_said_at = self.monotonic(), None

    def _skip_stale_words(self, counted_before: int) -> None:
        """After an input that counted a roll (a roll, or confirm of an unsure read): the words of the
        turns before it that are still waiting are dropped (see ``skip_stale_words``)."""
        if self.skip_stale_words and self.referee.turn_label != counted_before:
            skip = getattr(self.speaker, "skip_queued", None)
            if skip is not None:
                skip()

    def action(self, name: str, argument: "str | SeenOnPage | PlayersFromPage | None" = None) -> bool:
        """One button or typed command. Returns False when the person asked to quit. A press of confirm
        on the page (:class:`SeenOnPage`) for a guess no longer offered does nothing; new players from the
        page (:class:`PlayersFromPage`) are told whether they were taken once the table has said so."""
        if isinstance(argument, PlayersFromPage):
            request, argument = argument, argument.names
        else:
            request = None
        if name == "quit":
            return False
        if name == "roll":
            self.roll_seen(RollObservation(roll_tokens(argument or ""), source="keyboard"))
        elif (name == "confirm" and isinstance(argument, SeenOnPage)
              and argument.offer != self.referee.offer_number):
            log.info("a press of confirm on the page for guess %s is not taken: the guess offered now is %s",
                     argument.offer, self.referee.offer_number)
        elif name == "confirm" and self._too_soon_to_confirm(seen=isinstance(argument, SeenOnPage)):
            log.info("a press of confirm before the guess offered could be heard is not taken")
            if self._told_too_soon != self.referee.offer_number:
                # Said after the offer, once an offer (a bounce, an impatient second press): a blind player
                # hears that the press came and was not taken (found by an audit playing by ear: nothing
                # was said), and so does the table when it came from the page (whose answer is only "queued").
                self._told_too_soon = self.referee.offer_number
                self.perform([AboutPrompt(self.referee.confirm_too_soon())])
        else:
            if name == "confirm":
                argument = None
            elif self.referee.offered_guess is not None:
                # When the guess's words began, noted before this press's words say it again (the speaker
                # times only the newest prompt), so that a press of confirm counts from the first time they
                # were said: a press within a second of repeat (or status, help) saying a guess heard
                # before was ignored (found by a review), and so was one as an offer ended while status,
                # which no longer cuts it, spoke after it.
                self._note_guess_said()
            if name in CUTS_SPEECH:
                # What is being said is stale after these (or about to be said again): cut it and
                # drop the queue, so a player who pressed repeat or undo hears the answer at once.
                stop = getattr(self.speaker, "stop_talking", None)
                if stop is not None:
                    stop()
            elif name in ("choose", "choose_back") and argument is None and self.referee.phase == "await_decision":
                # The choose button offers the next name (held, the one before): the names offered before it, and the Wild
                # choice's explanation, are stale (confirm no longer takes them). Those still waiting are
                # dropped and one being said is cut; the roll's words before them are all said.
                self._drop_prompts()
            deciding = self.referee.phase == "await_decision"
            picks = self.referee.decision_picks
            counted = self.referee.turn_label
            offered = self.referee.offered_guess
            # The guess's words not begun yet (still behind the turn before's): nothing noted when they began.
            unsaid = offered is not None and self._guess_said_at is None and self._prompt_waits()
            outputs = self.referee.on_action(name, argument)
            if unsaid and self.referee.offered_guess is offered and any(isinstance(out, Prompt) for out in outputs):
                # Its words say the offer again (status): the one still waiting is dropped, and the offer is said
                # once, after them. Found by a review: status pressed while the offer waited queued its chips
                # and the offer behind it; the first offer was said in full, and a press of confirm as it ended
                # was ignored without a word, the speaker timing status's offer, still waiting.
                self._drop_prompts()
            if deciding and (self.referee.phase != "await_decision" or self.referee.decision_picks != picks):
                # A pick was made (confirm, or one typed or sent from the page: "choose Bob"): the
                # questions still waiting (the Wild explanation, names offered) are answered, so they
                # are dropped before the words that say whom it robbed. Found by an audit
                # (2026-12-03): after a pick from the page the table still heard "Press choose to hear
                # each name".
                self._drop_prompts()
            self._skip_stale_words(counted)
            self.perform(outputs)
            if request is not None:
                request.answer(outputs, self.referee.config.players)
        return True

    def _too_soon_to_confirm(self, *, seen: bool = False) -> bool:
        """A press of confirm for a guess offered that came before its words could be heard: not taken
        (``confirm_reaction``). Such a press was for the words before it (the guess offered for the dice
        before a new throw, heard as the new one was read), not for a guess no one heard. ``seen``: a
        press on the scoreboard page, whose player read the guess there as it was offered: only the
        time since the offer counts (the page showed the guess before for as long as the words)."""
        if self.confirm_reaction is None or self.referee.offered_guess is None:
            return False
        offered_for = self.monotonic() - self._offered_at
        since = None if seen else getattr(self.speaker, "seconds_since_prompt", None)
        heard_for = since() if since is not None else offered_for
        if not seen and self._guess_said_at is not None:  # its words began before they were said again
            heard_for = max(heard_for or 0.0, self.monotonic() - self._guess_said_at)
        return heard_for is None or min(heard_for, offered_for) < self.confirm_reaction

    def _note_guess_said(self) -> None:
        """Note when the words of the guess offered now began, once they have (the newest prompt while a
        guess is offered is its offer, or that offer said again)."""
        since = getattr(self.speaker, "seconds_since_prompt", None)
        began = since() if since is not None and self._guess_said_at is None else None
        if began is not None and math.isfinite(began):
            self._guess_said_at = self.monotonic() - began

    def _prompt_waits(self) -> bool:
        """Whether the newest prompt queued has not begun to be said (``seconds_since_prompt`` is None)."""
        since = getattr(self.speaker, "seconds_since_prompt", None)
        return since is not None and since() is None

    def _drop_prompts(self) -> None:
        drop = getattr(self.speaker, "drop_prompts", None)
        if drop is not None:
            drop()


#: ``lcr-pi run``'s ``Table(confirm_reaction=...)``: seconds the words of a guess offered must have been
#: said for before a press of confirm takes it. A press within a second of new words beginning is a
#: reaction to the words before them (the guess for the dice before a throw, cut as the new roll is read).
CONFIRM_REACTION = 1.0


@dataclass(frozen=True)
class SeenOnPage:
    """The argument of a press of confirm on the scoreboard page (``("confirm", SeenOnPage(offer))``):
    ``offer``, the guess the page showed (:attr:`lcr_pi.referee.Referee.offer_number`; None: it showed
    none). It is taken only for that guess, still on offer: found by a review, a press from a slow phone
    for one guess, arriving a second after the next was offered, took the new one, which its presser
    never saw, and the table heard as fact a roll no one had checked. A press for no guess (a Wild pick,
    the next game) is not taken while a guess is offered."""

    offer: int | None


class PlayersFromPage:
    """The argument of new players sent from the scoreboard page (``("players", PlayersFromPage(names))``,
    ``names`` one a line): the table answers it once it has taken or refused them, and the page says
    what happened. Found by an audit: the page said "New game with ..." and showed the names it sent
    when the server had checked them, though a roll landing before the referee's turn came made the
    game refuse them."""

    def __init__(self, names: str):
        self.names = names
        #: Once answered: whether the players were changed, what the referee said (its refusal when
        #: not), and the players as the game has them.
        self.taken = False
        self.said: tuple[str, ...] = ()
        self.players: tuple[str, ...] = ()
        self._answered = threading.Event()

    def answer(self, outputs, players: tuple[str, ...]) -> None:
        self.taken = any(isinstance(out, NewPlayers) for out in outputs)
        self.said = tuple(out.text for out in outputs if isinstance(out, Say))
        self.players = tuple(players)
        self._answered.set()

    def wait(self, timeout: float) -> bool:
        """Whether the table has answered within ``timeout`` seconds."""
        return self._answered.wait(timeout)


#: Buttons and keys after which the words still queued are stale: they are cut before the answer.
#: Not choose: it cuts only the prompts (the names offered, the Wild explanation), not the roll's moves
#: queued before them, which the table must hear (a Wild roll's words say what moved, then ask).
#: Not status: its answer follows the words being said. They are not stale (repeat says them again, undo
#: takes their turn back, a new game ends it; status says none of them): found by an audit playing by ear,
#: status pressed as "Ann rolled L, dot, C" began cut it and "Pass one chip to Bob on your left and one to
#: the centre", and the table heard the chips as if moved but never which chips to move.
CUTS_SPEECH = frozenset({"repeat", "undo", "new_game"})


def run_loop(
    table: Table,
    *,
    actions: "queue.Queue[tuple[str, str | SeenOnPage | None]]",
    dice_source=None,
    stop: threading.Event | None = None,
    idle_wait: float = 0.05,
    max_seconds: float | None = None,
) -> None:
    """Run the night until ``quit`` or ``stop``: buttons and keys first, then the dice source.

    ``dice_source.poll()`` returns a :class:`RollObservation` when dice have come to rest, else None; it
    must return quickly (it runs on every preview frame). Without a dice source (typed rolls) the loop
    just waits on the action queue, using no CPU.
    """
    stop = stop or threading.Event()
    started = time.monotonic()
    failing: str | None = None  # the error the dice source last raised, until a poll succeeds
    # A press of confirm for an offered guess that came while the dice moved (``dice_source.stirred``):
    # the guess it was for, held until the tray rests. Found by an audit: a helper's press while the
    # roller threw again took the guess as the roll, and the throw was then announced as the next
    # player's. A new roll makes the press stale; dice at rest as they lay take it.
    held = None  # (the guess, the press's argument: SeenOnPage from the page)
    table.start()
    while not stop.is_set():
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            break
        try:
            name, argument = actions.get(timeout=0 if dice_source is not None else idle_wait)
        except queue.Empty:
            pass
        else:
            guess = table.referee.offered_guess
            if name == "confirm" and guess is not None and getattr(dice_source, "stirred", False):
                # Held with its argument: a press on the page counts by the page's time, not the words'
                # (found by a review: a page's press held while a hand passed over the tray was then
                # taken as a button's, and ignored while the guess's words still waited).
                held = (guess, argument)
                continue
            if not table.action(name, argument):
                break
            continue
        if dice_source is not None:
            try:
                obs = dice_source.poll()
            except Exception as exc:  # noqa: BLE001 - one picture that cannot be read must not end the night
                obs = None
                failing = _poll_failed(table, exc, failing)
            else:
                failing = None
            if obs is not None:
                if held is not None:
                    log.info("a press of confirm while the dice were thrown again is not taken: the new roll is read")
                    held = None
                table.roll_seen(obs)
                continue
            if held is not None and not getattr(dice_source, "stirred", False):
                (guess, argument), held = held, None
                if table.referee.offered_guess is guess:  # still the offer it was pressed for
                    table.action("confirm", argument)
                continue
            if getattr(dice_source, "exhausted", False):
                break


def _poll_failed(table: Table, exc: Exception, failing: str | None) -> str:
    """A dice source's poll raised (a picture the reader refuses, a settle check that fails on an odd
    frame): logged every time, said once until the source works again, and the loop goes on."""
    what = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
    if isinstance(exc, UserError):
        log.error("the camera's picture could not be read: %s", what)
    else:
        log.exception("the camera's picture could not be read")
    if failing != what:
        table.announce(f"Warning: the camera's picture could not be read ({what}). I keep watching; "
                       "if this goes on, check the camera.")
    return what
