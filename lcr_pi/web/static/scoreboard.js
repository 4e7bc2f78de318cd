// LCR scoreboard: draws the board the Pi sends over server-sent events, whole each time.
// Everything is written with textContent (never HTML), so a player's name cannot become markup.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const SAID_SHOWN = 12;
  const SAID_CAUGHT_UP = 4;  // sentences added on a first load, or on coming back after missing some
  const FACE_GLYPH = { dot: "•", ".": "•" };
  let boot = null;
  let lastSaid = 0;
  let board = null;
  let source = null;
  let decisionKey = "";
  let catchingUp = false;

  // -- drawing ---------------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // Make `target`'s children like `source`'s, changing only what differs: a node a screen reader is
  // reading stays where it is (found by an audit: every board, a few a turn, made the players' cards and
  // the history of turns anew, and VoiceOver or TalkBack reading them lost its place). Children keyed by
  // data-key (a seat, a turn) are matched by key, so a new turn at the top moves no other.
  function morphNode(target, source) {
    if (target.nodeType === Node.TEXT_NODE) {
      if (target.data !== source.data) target.data = source.data;
      return;
    }
    for (const { name } of [...target.attributes]) if (!source.hasAttribute(name)) target.removeAttribute(name);
    for (const { name, value } of [...source.attributes]) if (target.getAttribute(name) !== value) target.setAttribute(name, value);
    morph(target, source);
  }

  function morph(target, source) {
    const wanted = [...source.childNodes];
    const keys = new Set(wanted.map((n) => n.dataset && n.dataset.key).filter((k) => k !== undefined));
    for (const child of [...target.children]) if (child.dataset.key !== undefined && !keys.has(child.dataset.key)) child.remove();
    wanted.forEach((node, i) => {
      const at = target.childNodes[i];
      const alike = at && at.nodeType === node.nodeType && (node.nodeType === Node.TEXT_NODE
        || (at.tagName === node.tagName && at.dataset.key === node.dataset.key
          && (node.dataset.key !== undefined || at.className === node.className)));
      if (alike) morphNode(at, node);
      else target.insertBefore(node, at || null);
    });
    while (target.childNodes.length > wanted.length) target.lastChild.remove();
  }

  function list(tag, items) {
    const node = document.createElement(tag);
    node.append(...items);
    return node;
  }

  function chipsText(n) {
    return n === 1 ? "1 chip" : `${n} chips`;
  }

  function faceName(face) {
    return face === "." ? "dot" : face;
  }

  function render(next) {
    const restarted = next.boot !== boot;
    boot = next.boot;
    board = next;
    document.body.dataset.seq = String(next.seq);
    renderNow(next);
    renderPlayers(next);
    renderSaid(next.announcements, restarted, catchingUp);
    catchingUp = false;
    renderControls(next);
    renderRoll(next);
    renderSeries(next);
    renderHistory(next.history);
  }

  function renderNow(b) {
    $("turn").textContent = b.turn.text;
    $("turn").dataset.seat = b.turn.seat === null ? "" : String(b.turn.seat);
    $("pot").textContent = `Centre pot: ${chipsText(b.pot)}`;
    $("pot").dataset.pot = String(b.pot);
    document.title = b.turn.player ? `${b.turn.text} – LCR scoreboard` : "LCR scoreboard";
  }

  // No line at all when no odds are coming (a roll-off has no game, or the odds are off): a "working it
  // out" that never ends would mislead.
  function oddsText(b, seat) {
    if (!b.odds) return b.odds_coming ? "Chance to win: working it out…" : null;
    const percent = b.odds.percent[seat];
    const shown = percent >= 10 || percent === 0 ? Math.round(percent) : percent.toFixed(1);
    return `Chance to win: ${b.odds.exact ? "" : "about "}${shown}%`;
  }

  // A marker's sign is for the eye only: a screen reader said "black right-pointing triangle, Rolling now".
  function marker(sign, text) {
    const p = el("p", "marker");
    const glyph = el("span", "", `${sign} `);
    glyph.setAttribute("aria-hidden", "true");
    p.append(glyph, text);
    return p;
  }

  function renderPlayers(b) {
    const items = b.players.map((p) => {
      const li = el("li", "player");
      li.dataset.key = String(p.seat);
      li.dataset.seat = String(p.seat);
      li.dataset.chips = String(p.chips);
      li.classList.toggle("rolling", p.rolling);
      li.classList.toggle("winner", p.winner);
      li.append(el("h3", "", p.name));
      const chips = el("p", "chips");
      chips.append(el("span", "count", String(p.chips)), ` ${p.chips === 1 ? "chip" : "chips"}`);
      li.append(chips);
      if (p.rolling) {
        const dice = b.turn.dice ? `, ${b.turn.dice === 1 ? "1 die" : `${b.turn.dice} dice`}` : "";
        li.append(marker("▶", b.phase === "await_decision" ? "Choosing now" : `Rolling now${dice}`));
      } else if (p.winner) {
        li.append(marker("★", "Winner"));
      } else if (p.chips === 0 && b.phase !== "game_over") {
        li.append(el("p", "marker", "No chips: skips their turns"));
      }
      const odds = oddsText(b, p.seat);
      if (odds) li.append(el("p", "odds", odds));
      if (p.wins !== null) li.append(el("p", "wins", `Games won: ${p.wins}`));
      return li;
    });
    morph($("players"), list("ol", items));
    let note = b.odds_coming ? "Chances to win are being worked out." : "";
    if (b.odds && b.odds.exact) note = "Chances to win are exact.";
    else if (b.odds) note = `Chances to win are estimates from simulated games (give or take ${b.odds.plus_minus} points).`;
    $("odds-note").textContent = note;
    $("odds-note").hidden = !note;
  }

  function renderSaid(announcements, restarted, catchingUp) {
    const log = $("said");
    if (restarted) {
      // A first load (or a restarted Pi): show the last few words, then only what is new.
      lastSaid = 0;
      log.replaceChildren();
    }
    if (restarted || catchingUp) {
      // Coming back (the Wi-Fi blinked, the phone slept) the same: a screen reader heard every sentence
      // missed, a dozen of old turns at once, while the table played on (found by an audit). The board
      // and the history of turns show them all.
      announcements = announcements.filter((a) => a.id > lastSaid).slice(-SAID_CAUGHT_UP);
    }
    for (const a of announcements) {
      if (a.id <= lastSaid) continue;
      log.append(el("p", "", a.text));
      lastSaid = a.id;
    }
    while (log.childElementCount > SAID_SHOWN) log.firstElementChild.remove();
  }

  function renderControls(b) {
    $("controls").hidden = !b.controls;
    if (!b.controls) return;
    const decision = b.decision;
    const key = decision ? JSON.stringify(decision) : "";
    $("decision").hidden = !decision;
    if (key !== decisionKey) {
      decisionKey = key;
      // The buttons are made anew; one that had the focus must not take it away with it (found by an
      // audit: after a choice the focus fell to the page itself, and a screen reader lost its place).
      const focused = $("choices").contains(document.activeElement) ? document.activeElement.dataset.choice : null;
      if (decision) {
        const chips = decision.take === 1 ? "one chip" : "two chips, one choice per chip";
        $("decision-text").textContent = decision.picked && decision.picked.length
          ? `${decision.player} takes one chip from ${decision.picked[0]}. Take the second chip from:`
          : `${decision.player} takes ${chips}. Take from:`;
        $("choices").replaceChildren(...decision.choices.map((name) => {
          const button = el("button", "", name);
          button.type = "button";
          button.dataset.action = "choose";
          button.dataset.choice = name;
          button.setAttribute("aria-describedby", "decision-text");  // who takes, how many, from whom
          return button;
        }));
      } else {
        $("choices").replaceChildren();
      }
      if (focused !== null) {
        // The same player again if they can still give (the second of two chips), else the first choice;
        // once the choice is made, the game controls, where Tab goes on to "Confirm / next".
        const buttons = [...$("choices").querySelectorAll("button")];
        (buttons.find((b) => b.dataset.choice === focused) || buttons[0] || $("game-controls")).focus();
      }
    }
    const names = $("player-names");
    if (document.activeElement !== names && !names.dataset.edited) names.value = b.players.map((p) => p.name).join("\n");
    $("players-submit").disabled = !b.players_changeable;
    $("players-hint").textContent = b.players_changeable
      ? "Starts a new game with these players."
      : "The players can be changed before a game's first roll or once it is over.";
    const form = $("speech-form");
    form.hidden = !b.speech;
    if (b.speech) {
      for (const name of ["rate", "volume"]) {
        const input = $(name);
        if (document.activeElement !== input && !input.dataset.edited) input.value = String(b.speech[name]);
      }
    }
  }

  function renderRoll(b) {
    const last = b.history[0];
    $("last-roll").textContent = last ? `Turn ${last.number}: ${last.text}` : "No dice rolled yet.";
    $("last-dice").replaceChildren(...(last ? last.faces : []).map((f) => el("span", "die", FACE_GLYPH[f] || f)));
    const photo = b.evidence;
    $("photo").hidden = !photo;
    if (photo) {
      const img = $("photo-img");
      const faces = photo.faces.map(faceName).join(", ");
      if (img.getAttribute("src") !== photo.url) img.src = photo.url;
      img.alt = `Photo of the dice tray for ${photo.player || "the last"} roll: ${faces}, with the dice reader's marks.`;
      $("photo-caption").textContent = `The camera's photo of ${photo.player ? `${photo.player}'s` : "the last"} read roll (${faces}), with the reader's marks.`;
    }
  }

  function renderSeries(b) {
    $("series").hidden = !b.series;
    if (!b.series) return;
    const s = b.series;
    const champion = s.champion ? ` ${s.champion} won the series!` : "";
    const goesOn = s.goes_on ? ` ${s.goes_on}` : "";
    $("series-text").textContent = `A series, ${s.goal}. Games played: ${s.games}. Wins: ${s.tally}.${champion}${goesOn}`;
  }

  function renderHistory(history) {
    morph($("history"), list("ol", history.map((turn) => {
      const li = el("li");
      li.dataset.key = String(turn.number);
      li.append(el("span", "who", `Turn ${turn.number}. `), turn.text);
      return li;
    })));
  }

  // -- the live connection ---------------------------------------------------------------------

  function setConnection(live) {
    const status = $("connection");
    const text = live ? "Live" : "Reconnecting…";
    if (status.textContent !== text) status.textContent = text;
    status.classList.toggle("offline", !live);
  }

  // The Pi sends a "ping" every few seconds (it says how many). A connection that brings nothing for
  // several of them is dead without a word (the Pi lost power, the Wi-Fi went): say so, and start again.
  let heartbeatSeconds = 15;
  let watchdog = null;

  function heard() {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      setConnection(false);
      source.close();
      connect();
    }, (2.5 * heartbeatSeconds + 2) * 1000);
  }

  function connect() {
    source = new EventSource("/events");
    heard();
    // Each (re)connection, also the browser's own, begins with the whole board: the first is a catch-up.
    source.addEventListener("open", () => { catchingUp = true; });
    source.addEventListener("board", (event) => {
      heard();
      setConnection(true);
      render(JSON.parse(event.data));
    });
    source.addEventListener("ping", (event) => {
      const every = Number(event.data);
      if (every > 0) heartbeatSeconds = every;
      heard();
    });
    source.addEventListener("error", () => {
      setConnection(false);
      // The browser retries by itself after a network error; after a refused answer it gives up, so
      // start again ourselves.
      if (source.readyState === EventSource.CLOSED) {
        clearTimeout(watchdog);
        source.close();
        setTimeout(connect, 2000);
      }
    });
  }

  // -- controls --------------------------------------------------------------------------------

  // `done(data)` says what an answer that went through did; `refused(data)`, if given, is told of one that did not.
  async function post(url, body, done, refused) {
    const result = $("control-result");
    const pin = $("pin").value;
    if (!pin) {
      result.textContent = "Enter the PIN first.";
      $("pin").focus();
      return;
    }
    result.textContent = "Sending…";
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...body, pin }),
      });
      const data = await response.json().catch(() => ({}));
      if (!response.ok && refused) refused(data);
      result.textContent = response.ok ? done(data) : (data.error || `Refused (${response.status}).`);
    } catch (error) {
      result.textContent = "The scoreboard cannot be reached. Try again in a moment.";
    }
  }

  const ACTION_DONE = {
    confirm: "Confirm sent.",  // taken or not, the referee says (a press too soon is not)
    undo: "Undo sent.",
    repeat: "Repeating.",
    status: "The status is being said.",
    new_game: "A new game is starting.",
    choose: "Choice sent.",
  };

  function onControlClick(event) {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    const body = { action };
    if (button.dataset.choice) body.choice = button.dataset.choice;
    // A confirm names the guess this page shows (none: null), and the Pi takes it only for that guess, still
    // on offer: from a slow phone, a press for one guess must not take the next, which no one here saw.
    if (action === "confirm") body.guess = board && board.guess ? board.guess.id : null;
    if (action === "new_game") closeNewGame();
    post("/api/action", body, () => ACTION_DONE[action] || "Sent.");
  }

  // The players as the game has them, in the field: shown at once, as the board with them may have come
  // before this answer while the field still counted as being edited, and no other comes (found by a test
  // on a loaded machine: the field kept the typed "  Dee   Dee ").
  function showPlayers(names) {
    const field = $("player-names");
    delete field.dataset.edited;
    if (document.activeElement !== field) field.value = names.join("\n");
  }

  function closeNewGame() {
    $("new-game-confirm").hidden = true;
    $("new-game").setAttribute("aria-expanded", "false");
    $("new-game").focus();
  }

  function setUpControls() {
    $("controls").addEventListener("click", onControlClick);
    $("new-game").addEventListener("click", () => {
      $("new-game-confirm").hidden = false;
      $("new-game").setAttribute("aria-expanded", "true");
      $("new-game-cancel").focus();
    });
    $("new-game-cancel").addEventListener("click", closeNewGame);
    // Escape cancels the question, as it does a dialog (found by an audit: only Cancel closed it).
    $("new-game-confirm").addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !$("new-game-confirm").hidden) {
        event.preventDefault();
        closeNewGame();
      }
    });
    for (const name of ["rate", "volume"]) {
      $(name).addEventListener("input", () => { $(name).dataset.edited = "1"; });
    }
    $("player-names").addEventListener("input", () => { $("player-names").dataset.edited = "1"; });
    $("players-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const names = $("player-names").value.split("\n").map((n) => n.trim()).filter((n) => n);
      // The answer is the game's: the players it took, or its refusal and the players it kept (found by an
      // audit: a roll landing before the change's turn came made the game refuse it, while the page said
      // "New game with ..." and showed the names sent). Not answered in time, the field follows the board.
      post("/api/players", { names }, (data) => {
        if (!data.players) {
          showPlayers(board.players.map((p) => p.name));
          return "Sent: the referee says whether the players are changed.";
        }
        showPlayers(data.players);
        return `New game with ${data.players.join(", ")}.`;
      }, (data) => { if (data.players) showPlayers(data.players); });
    });
    $("speech-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const rate = Number($("rate").value);
      const volume = Number($("volume").value);
      post("/api/speech", { rate, volume }, (data) => {
        for (const name of ["rate", "volume"]) {  // as taken, for the same reason as the players' names
          delete $(name).dataset.edited;
          if (document.activeElement !== $(name)) $(name).value = String(data[name]);
        }
        return `Speech: ${data.rate} words per minute, volume ${data.volume}%.`;
      });
    });
  }

  // -- theme -----------------------------------------------------------------------------------

  function setUpTheme() {
    const button = $("theme");
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    const stored = () => { try { return localStorage.getItem("lcr-theme"); } catch (e) { return null; } };
    const show = () => {
      const theme = stored();
      if (theme) document.documentElement.dataset.theme = theme;
      else delete document.documentElement.dataset.theme;
      pressed(theme ? theme === "dark" : media.matches);
    };
    const pressed = (dark) => {
      button.setAttribute("aria-pressed", String(dark));
      button.querySelector(".switch").textContent = dark ? "on" : "off";
    };
    button.addEventListener("click", () => {
      const dark = button.getAttribute("aria-pressed") === "true";
      try { localStorage.setItem("lcr-theme", dark ? "light" : "dark"); } catch (e) { /* private mode */ }
      document.documentElement.dataset.theme = dark ? "light" : "dark";
      pressed(!dark);
    });
    media.addEventListener("change", show);
    show();
  }

  setUpTheme();
  setUpControls();
  connect();
})();
