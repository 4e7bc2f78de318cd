"""What the scoreboard page shows, as plain JSON data. Pure: a referee in, a dict out.

The page draws everything from this one snapshot, so a phone that (re)connects gets the whole table at
once, and tests compare it with the engine directly.

>>> from lcr_pi.referee import Referee, RollObservation
>>> from lcr_pi.rules import GameConfig
>>> ref = Referee(GameConfig.create(["Ann", "Bob", "Cy"]))
>>> _ = ref.start()
>>> _ = ref.on_roll(RollObservation(("L", "dot", "C")))
>>> board = board_snapshot(ref)
>>> [(p["name"], p["chips"], p["rolling"]) for p in board["players"]], board["pot"]
([('Ann', 1, False), ('Bob', 4, True), ('Cy', 3, False)], 1)
>>> board["turn"]["text"]
'Bob: roll three dice'
>>> board["history"][0]["text"]
'Ann rolled L, dot, C. Pass one chip to Bob on your left and one to the centre. Ann has one chip left.'
"""

from __future__ import annotations

from lcr_pi.announce import announce, dice, join_names, one_chip_each, series_goes_on, spoken_faces
from lcr_pi.rules import events as ev

#: Turns kept on the page (newest first); older ones are in the game log on the Pi.
HISTORY_LIMIT = 60

_TURN_EVENTS = (ev.RollResolved, ev.ChipsTaken, ev.PotTaken, ev.WildsWasted, ev.PlayerSkipped, ev.GameWon)


def board_snapshot(referee) -> dict:
    """Everything the page shows except odds, announcements and the photo (those the server adds)."""
    config = referee.config
    game = referee.game
    state = game.state if game is not None else None
    series = referee.series
    players = []
    for seat, name in enumerate(config.players):
        players.append({
            "seat": seat,
            "name": name,
            "chips": state.chips[seat] if state else config.starting_chips,
            "rolling": _rolling_seat(referee) == seat,
            "winner": bool(state and state.winner == seat),
            "wins": series.wins[seat] if series is not None else None,
        })
    return {
        "players": players,
        "pot": state.pot if state else 0,
        "phase": referee.phase,
        "players_changeable": referee.can_change_players(),
        "variant": config.variant_name,
        "rolls": state.rolls if state else 0,
        "turn": _turn(referee),
        "guess": _guess(referee),
        "decision": _decision(referee),
        "history": _history(game, config.players) if game is not None else [],
        "series": _series(series),
    }


def odds_key(referee) -> tuple | None:
    """The position the odds depend on; None while there is no game (a roll-off)."""
    if referee.game is None:
        return None
    s = referee.game.state
    pending = (s.pending.seat, s.pending.take, tuple(s.pending.eligible)) if s.pending else None
    return (referee.config.players, s.chips, s.pot, s.current, s.winner, pending)


def odds_view(odds) -> dict:
    """An :class:`lcr_pi.stats.Odds` for the page: percentages, and whether they are estimates.

    >>> from lcr_pi.stats import Odds
    >>> odds_view(Odds((0.25, 0.75), False, 0.004, "monte-carlo", 9000))
    {'percent': [25.0, 75.0], 'exact': False, 'plus_minus': 0.8, 'method': 'monte-carlo'}
    """
    return {
        "percent": [round(100 * p, 1) for p in odds.probabilities],
        "exact": bool(odds.exact),
        "plus_minus": round(200 * odds.std_error, 1),  # about two standard errors, in percent
        "method": odds.method,
    }


def _rolling_seat(referee) -> int | None:
    if referee.game is None:
        return referee.roll_off.next_seat if referee.roll_off is not None else None
    state = referee.game.state
    if state.winner is not None:
        return None
    return state.current


def _turn(referee) -> dict:
    phase = referee.phase
    names = referee.config.players
    if referee.game is None and referee.roll_off is None:
        return {"seat": None, "player": None, "dice": 0, "text": "Waiting for the game to start"}
    if phase == "roll_off":
        # Who tied and what each has scored this round, as status says them (found by an audit: the page
        # showed whose roll it was alone, so a tie and the scores were only heard, once).
        off = referee.roll_off
        seat = off.next_seat
        text = "Roll-off for who goes first"
        text += f": {join_names([names[s] for s in off.contenders])} tied and roll again. " if off.round > 1 else ". "
        if off.scores:
            text += join_names(f"{names[s]} scored {n}" for s, n in off.scores) + ". "
        return {"seat": seat, "player": names[seat], "dice": 3, "text": f"{text}{names[seat]}: roll three dice"}
    state = referee.game.state
    if phase == "game_over":
        return {"seat": state.winner, "player": names[state.winner], "dice": 0,
                "text": f"{names[state.winner]} won the game"}
    if phase == "await_decision":
        p = state.pending
        picks = referee.decision_picks
        chip_word = "one chip" if p.take == 1 else "the second chip" if picks else "two chips"
        taken = f" (one taken from {names[picks[0]]})" if picks else ""
        whom = f"whom to take {chip_word} from{taken}"
        if not picks and one_chip_each(p.take, p.eligible, state.chips):
            whom = "two players to take one chip each from"  # as the speaker says it: no one has two to give
        return {"seat": p.seat, "player": names[p.seat], "dice": 0, "text": f"{names[p.seat]}: choose {whom}"}
    text = f"{state.current_player}: roll {dice(state.dice_to_roll)}"
    if phase == "confirm_read":
        guess = spoken_faces(referee.offered_guess or ())
        text += f" (the last read was unsure: roll again, or confirm it if the dice show {guess})"
    return {"seat": state.current, "player": state.current_player, "dice": state.dice_to_roll, "text": text}


def _guess(referee) -> dict | None:
    """The guess an unsure read offers for a press of confirm: its faces and its number (the server adds
    the ``id`` a press from the page sends back, :meth:`lcr_pi.web.live.LiveBoard.guess_id`)."""
    if referee.offered_guess is None:
        return None
    return {"offer": referee.offer_number, "faces": list(referee.offered_guess)}


def _decision(referee) -> dict | None:
    if referee.phase != "await_decision":
        return None
    state = referee.game.state
    p = state.pending
    names = referee.config.players
    picks = referee.decision_picks  # the first of two chips chosen: that chip is no longer there to take
    return {
        "seat": p.seat,
        "player": names[p.seat],
        "take": p.take,
        "picked": [names[s] for s in picks],
        "choices": [names[s] for s in p.eligible if state.chips[s] - picks.count(s) > 0],
    }


def _history(game, players) -> list[dict]:
    """Turns newest first: who, the faces and the same sentences the speaker used."""
    turns: list[dict] = []
    said: list[list] = []  # each turn's events, announced together as the speaker announced them
    for event in game.events:
        if not isinstance(event, _TURN_EVENTS):
            continue
        if isinstance(event, ev.RollResolved) or not turns:
            turns.append({"number": len(turns) + 1, "player": event.player,
                          "faces": list(getattr(event, "faces", ())), "text": ""})
            said.append([])
        said[-1].append(event)  # a Wild choice, a pot taken or the win belongs to the roll before it
    for turn, events in zip(turns, said):
        turn["text"] = " ".join(announce(events, players))
    return turns[::-1][:HISTORY_LIMIT]


def _series(series) -> dict | None:
    if series is None:
        return None
    rules = series.rules
    # "first to 1 win", "best of 1 game": in number with the count, as the speaker says it (found by an
    # audit: the page said "best of 1 games").
    if rules.first_to:
        goal = f"first to {rules.first_to} win{'' if rules.first_to == 1 else 's'}"
    else:
        goal = f"best of {rules.best_of} game{'' if rules.best_of == 1 else 's'}"
    # A best of N whose top is tied after its N games goes on: the page says so in the speaker's words
    # (found by an audit: it showed "best of 3 games", three played and no winner, with no word why).
    goes_on = series_goes_on(series) or None
    # "has" between a name and its number, as the speaker says it: "Player 2 has 1 win", not "Player 2 1"
    # (found by an audit: the page's tally read "Wins: Player 1 0, Player 2 1, Player 3 0").
    tally = ", ".join(f"{name} has {won} win{'' if won == 1 else 's'}"
                      for name, won in zip(series.config.players, series.wins))
    return {
        "games": series.games,
        "goal": goal,
        "tally": tally,
        "champion": series.config.players[series.champion] if series.champion is not None else None,
        "goes_on": goes_on,
    }
