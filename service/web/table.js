// The table: both piles, the hand in melds, the actions the view lists as legal, the
// defense step, the hand result, and the running score.  Live updates come from the
// match's event stream; in a two-people-on-one-device match the hand is hidden between
// turns until the next player reveals it.
//
// Knock opens an arrangement step when the knocker has a choice of melds (any legal
// arrangement under knocker_arranges, else when more than one leaves the least
// deadwood): it opens with the best melds made, so one more click knocks; the knock
// then carries the melds shown, or none when the person lets the service choose.  Gin
// never asks: nothing is laid off on Gin, so its arrangement cannot matter.
//
// A match against a friend on another device first waits for them (the invite page,
// following the stream until they join), then shows whether they follow the match
// (opponent.connected), the clock of the seat to act (a deadline, counted down here),
// and at the end the rematch.  legal_actions lists the plays of the seat to act, and
// also, whoever's turn it is, resign (claim_timeout, abort): those are buttons of their
// own (ENDINGS), never plays; whose turn it is is view.turn.
//
// A match is opened with the seat tokens this browser keeps of it, or else with the
// player token (a match of the player's, made or joined on any device): the seat is
// then the view's.

import { ApiError, api, followStream, serverNow } from "./api.js";
import { arrangement, benchElement, breakMeld, looseCards, makeMeld, pick, sameMelds } from "./arrange.js";
import { bestMelds, cardBack, cardElement, cardName, cardsText, deadwoodOf, handElement, hasChoiceOfLeast, meldKind, playText, pretty } from "./cards.js";
import { countChanged } from "./header.js";
import { resultElement } from "./result.js";
import { currentPlayer, holds, pref, saveMatch, savedMatch, seatsOf, setPref } from "./saved.js";
import { clockText, copyField, downloadText, endText, h, matchLength, problemText, remainingText, says, seatLabel, toast } from "./ui.js";

// The actions that end the match instead of playing the cards.
const ENDINGS = new Set(["resign", "claim_timeout", "abort"]);

export function mountTable(root, id) {
  const entry = savedMatch(id) || {};
  const me = currentPlayer();
  const bySeat = seatsOf(entry).length > 0; // else by the player token
  if (!bySeat && !me) {
    root.append(
      h("section.panel#not-yours", {}, h("h1", {}, "Not your match"),
        h("p", {}, "This browser holds no seat token for this match, so it cannot show it. Matches you create or import here are listed in the ",
          h("a", { href: "#/history" }, "history"), "."),
        h("p", {}, "If you play it as a player on another device, use that player here: ", h("a", { href: "#/profile" }, "Continue as a guest"), " → Already a player on another device?")),
    );
    return () => {};
  }
  // By the player token, the seat is the view's (the seat to act, if the player holds both).
  let mySeats = bySeat ? seatsOf(entry) : [];
  const hotseat = mySeats.length === 2;
  const S = {
    view: null, // the last view fetched (for the seat shown, or any seat while covered)
    shown: hotseat ? null : mySeats[0], // the seat whose hand is on screen (hotseat: null = covered)
    selected: null,
    sort: pref("sort", "melds"),
    busy: false,
    log: [],
    previousHand: null, // to mark the card just drawn
    drawn: null,
    resultSeen: entry.resultSeen || 0,
    streamSeq: 0,
    generation: 0,
    confirmResign: false, // the resign button asked "are you sure?"
    expired: null, // the deadline (and version) whose countdown reached zero
    claimTries: 0,
    rematching: false,
    finishedSeen: null, // when this page saw the match finished (to stop asking for a rematch)
    coach: null, // the hint asked for ({seat, version, action, reason} or {seat, version, refused}): shown at that version only
    asking: false, // a hint is on its way
    arrange: null, // the knocker's arrangement step ({version, action, least, ...arrangement, error})
    defend: null, // the defender's choice ({version, seat, ...arrangement of the hand, layoffs, error})
  };
  const token = (seat) => (bySeat ? entry.tokens[seat] : me.token);
  const el = h("div.table#table");
  root.append(el);

  // --- data --------------------------------------------------------------------------

  // Only the newest request's answer counts: a slower, older one never overwrites it.
  async function load(seat) {
    const generation = ++S.generation;
    const view = await api.view(id, token(seat));
    if (generation === S.generation) accept(view);
  }

  function accept(view) {
    const seat = view.seat;
    if (!bySeat) {
      mySeats = [seat];
      if (!S.view) saveMatch(id, { player: me.id, created: entry.created || new Date().toISOString() });
      // The header counts the player's games waiting for their move.
      const mine = (x) => x.status === "active" && x.turn === x.seat;
      if (S.view && mine(S.view) !== mine(view)) countChanged();
    }
    // Two people on one device: a view of the other seat than the one revealed is never kept.
    if (hotseat && S.shown !== null && seat !== S.shown) return;
    if (S.view && S.view.seat === seat && S.view.hand_number === view.hand_number && view.phase === "discard" && S.previousHand) {
      const before = new Set(S.previousHand);
      S.drawn = view.hand.find((c) => !before.has(c)) || null;
    } else if (view.phase !== "discard") {
      S.drawn = null;
    }
    S.previousHand = view.hand;
    // A choice of melds belongs to the position it was made at.
    if (S.arrange && (S.arrange.version !== view.version || S.arrange.seat !== view.seat || view.phase !== "discard")) S.arrange = null;
    if (S.defend && (S.defend.version !== view.version || S.defend.seat !== view.seat)) S.defend = null;
    S.view = view;
    if (hotseat && S.shown !== null && view.turn !== S.shown) S.shown = null;
    if (S.selected && !view.hand.includes(S.selected)) S.selected = null;
    if (view.status !== "active") S.confirmResign = false;
    if (view.status === "finished") {
      saveMatch(id, { finished: true });
      S.finishedSeen ??= Date.now();
    }
  }

  // A person on another device (or a seat still open): not the computer, not this device.
  const online = (v) => !hotseat && v.seats[1 - v.seat].kind !== "computer";

  const viewSeat = () => (hotseat ? (S.shown ?? mySeats[0]) : mySeats[0]);

  async function refresh() {
    if (S.busy) return;
    try {
      await load(viewSeat());
    } catch (err) {
      toast(problemText(err), "error");
    }
    render();
  }

  // A refresh in the background (presence, the rematch, a timeout claim): drawn only
  // when something shown changed, so that it never disturbs a player choosing a card.
  const signature = (v) => v && JSON.stringify([v.version, v.opponent.connected, v.rematch, v.deadline, v.legal_actions.map((a) => a.type)]);
  async function quietRefresh() {
    if (S.busy || !S.view) return;
    const generation = ++S.generation;
    try {
      const view = await api.view(id, token(viewSeat()));
      if (generation !== S.generation || S.busy) return;
      const before = signature(S.view);
      accept(view);
      if (signature(S.view) !== before) render();
    } catch {
      // the next event, or the next refresh, tries again
    }
  }

  let pendingRefresh = null;
  function onStreamEvent(event) {
    S.streamSeq = Math.max(S.streamSeq, event.seq);
    if (S.busy || (S.view && event.seq <= S.view.version)) return; // act() catches up when it is done
    if (event.type === "seat_joined") toast(`${event.data.name} joined: the first hand is dealt.`);
    noteEvents([event]);
    clearTimeout(pendingRefresh);
    pendingRefresh = setTimeout(() => {
      if (!S.view || S.streamSeq > S.view.version) refresh();
    }, 60);
  }

  // `retry`: a resignation, a timeout claim or calling off do not depend on the cards,
  // so when the table changed in the meantime they are sent again if still legal.
  // `refused(text)`: told the service's reason when it refuses the action.
  async function act(action, { retry = false, refused = null } = {}) {
    if (S.busy || !S.view) return;
    const seat = S.view.seat;
    S.busy = true;
    S.generation++; // a refresh still on its way is older than this action
    render();
    try {
      const result = await api.act(id, token(seat), S.view.version, action);
      noteEvents(result.events);
      accept(result.view);
      S.selected = null;
      S.coach = null;
    } catch (err) {
      if (err instanceof ApiError && (err.code === "version_mismatch" || err.code === "conflict")) {
        if (retry) {
          S.busy = false;
          await refresh();
          if (S.view.legal_actions.some((a) => a.type === action.type)) return act(action);
          return;
        }
        toast("The table changed in the meantime: here it is as it is now.", "info");
      } else {
        toast(problemText(err), "error");
        if (refused) refused(problemText(err));
      }
      S.busy = false;
      await refresh();
      return;
    }
    S.busy = false;
    render();
    if (S.streamSeq > S.view.version) refresh();
  }

  // What the other player did, as one line each.  Never names a card drawn from the
  // stock: in a shared-device match the log is seen by both players.
  function noteEvents(events) {
    const names = S.view ? S.view.seats.map((s) => s.name) : ["Seat 1", "Seat 2"];
    const me = S.view ? S.view.seat : null;
    for (const e of events) {
      const d = e.data;
      const who = names[d.seat] ?? "";
      let line = null;
      if (e.type === "card_drawn") line = d.source === "stock" ? `${who} drew from the stock` : `${who} took ${pretty(d.card)} from the pile`;
      else if (e.type === "card_discarded") line = `${who} discarded ${pretty(d.card)}`;
      else if (e.type === "upcard_passed") line = `${who} passed the upcard`;
      else if (e.type === "knocked") line = `${who} discarded ${pretty(d.card)} and ${d.gin ? "went Gin" : `knocked with ${d.deadwood}`}`;
      else if (e.type === "hand_dealt") line = `Hand ${d.hand} dealt; ${names[d.starter]} starts`;
      else if (e.type === "seat_joined") line = `${d.name} joined the match`;
      else if (e.type === "hint_shown") line = `${who} asked for a hint`;
      else if (e.type === "match_ended" && d.reason === "resigned") line = `${names[d.seat]} resigned`;
      else if (e.type === "match_ended" && d.reason === "timeout") line = `${names[d.seat]} claimed the match on time`;
      if (line && (hotseat || d.seat !== me || e.type === "hand_dealt")) S.log.push(line);
    }
    S.log = S.log.slice(-4);
  }

  // --- rendering ---------------------------------------------------------------------

  function render() {
    const v = S.view;
    if (!v) {
      el.replaceChildren(h("p.loading", {}, "Loading the table…"));
      return;
    }
    el.dataset.phase = v.phase;
    el.dataset.version = v.version;
    el.dataset.status = v.status;
    el.dataset.seat = v.seat;
    el.dataset.turn = v.turn ?? "";
    el.classList.toggle("busy", S.busy);
    const active = document.activeElement;
    const handHadFocus = Boolean(active && active.closest && active.closest("#hand"));
    // In a step of melds: the same button, or the same card, keeps the focus.
    const stepFocus = active && active.closest && active.closest("#arrange, #defense") ? (active.id ? `#${active.id}` : active.dataset.card ? `[data-card="${active.dataset.card}"]` : null) : null;
    const names = v.seats.map((s) => s.name);
    if (v.status === "waiting") {
      el.replaceChildren(waitingPanel(v, names));
      return;
    }
    if (v.status === "finished" && v.end_reason === "aborted") {
      el.replaceChildren(abortedPanel());
      return;
    }
    const main = [];
    let handShown = false;
    const newResult = v.last_hand && v.last_hand.hand > S.resultSeen;
    const showingResult = newResult || v.status === "finished";
    if (showingResult) main.push(resultPanel(v, names));
    else if (hotseat && (S.shown === null || S.shown !== v.turn || v.seat !== S.shown)) main.push(cover(v, names));
    else {
      main.push(...tableParts(v, names));
      handShown = true;
    }
    el.replaceChildren(...[scoreBar(v, newResult && v.status !== "finished"), matchBar(v, names, handShown), ...main].filter(Boolean));
    if (handHadFocus) {
      const target = el.querySelector(`#hand [data-card="${S.focus}"]`) || el.querySelector("#hand .card");
      if (target) target.focus();
    }
    if (stepFocus) el.querySelector(`#arrange ${stepFocus}, #defense ${stepFocus}`)?.focus();
  }

  // `between`: a hand's result is on screen while the next hand is already dealt: the
  // bar is about the hand shown (its number, no one to act) until the next is shown.
  function scoreBar(v, between) {
    const turn = between ? null : v.turn;
    const hand = between ? `after hand ${v.last_hand.hand}` : `hand ${v.hand_number}`;
    const opp = 1 - v.seat;
    // Whether the other player follows the match now (a live stream open): only for a
    // person on another device (null for the computer; both seats are here in hotseat),
    // while the match is played (a finished match's view does not say).
    const connected = v.opponent.connected;
    const presence =
      online(v) && v.status === "active" && connected !== null
        ? h(
            `span.presence${connected ? ".on" : ""}#presence`,
            { dataset: { connected: String(connected) }, title: connected ? `${v.seats[opp].name} has the match open` : `${v.seats[opp].name} is not following the match now` },
            connected ? "online" : "away",
          )
        : null;
    return h(
      "div.scorebar",
      { "aria-label": "Score" },
      v.seats.map((s, i) =>
        h(
          `span.player${turn === i ? ".to-act" : ""}`,
          { dataset: { seat: i } },
          h("b", {}, s.name),
          " ",
          h("span.score", {}, v.scores[i]),
          i === opp ? presence : null,
        ),
      ),
      h("span.meta#score-meta", {}, `${v.rules.preset} · ${matchLength(v.rules)}${v.rules.turn_seconds ? ` · ${clockText(v.rules.turn_seconds)}` : ""} · ${hand}`),
    );
  }

  // The clock of the seat to act, a timeout claim, and resign (with a confirm step).
  function matchBar(v, names, handShown) {
    const items = [];
    if (v.status === "active" && v.deadline) items.push(clockElement(v, names));
    const resign = v.legal_actions.find((a) => a.type === "resign");
    // Two people on one device: only the player holding the device (the hand shown) may resign.
    const canResign = resign && (!hotseat || handShown);
    if (canResign && !S.confirmResign) {
      items.push(
        h(
          "button.resign#resign",
          { type: "button", disabled: S.busy, onclick: askResign },
          hotseat ? `Resign for ${names[v.seat]}…` : "Resign…",
        ),
      );
    }
    if (canResign && S.confirmResign) {
      items.push(
        h(
          "div.confirm#resign-confirm",
          { role: "alertdialog", "aria-label": "Resign the match?", onkeydown: (e) => e.key === "Escape" && cancelResign() },
          h("span", {}, `${hotseat ? `${names[v.seat]}, resign` : "Resign"} the match? ${says(names[1 - v.seat], "wins")} it.`),
          h("button.danger#confirm-resign", { type: "button", disabled: S.busy, onclick: () => ((S.confirmResign = false), act(resign, { retry: true })) }, "Resign"),
          h("button#cancel-resign", { type: "button", onclick: cancelResign }, "Keep playing"),
        ),
      );
    }
    return items.length ? h("div.matchbar#matchbar", {}, items) : null;
  }

  function askResign() {
    S.confirmResign = true;
    render();
    el.querySelector("#cancel-resign")?.focus();
  }

  function cancelResign() {
    S.confirmResign = false;
    render();
  }

  function clockElement(v, names) {
    const left = Date.parse(v.deadline) - serverNow();
    const mine = v.turn === v.seat && !hotseat;
    const out = left <= 0;
    const claim = v.legal_actions.find((a) => a.type === "claim_timeout");
    const other = names[1 - v.turn];
    let who;
    if (!out) who = mine ? "Your time " : `${names[v.turn]}'s time `;
    else if (mine) who = `Your time is up: play now, or ${other} may claim the match. `;
    else who = `${names[v.turn]}'s time is up. `;
    return h(
      `div.clock${out ? ".out" : left < 10_000 ? ".low" : ""}${mine ? ".mine" : ""}#clock`,
      { dataset: { seat: v.turn }, role: "timer" },
      h("span.icon", { "aria-hidden": "true" }),
      h("span#clock-who", {}, who),
      h("b#clock-left", {}, remainingText(left)),
      claim ? h("button.primary#claim", { type: "button", disabled: S.busy, onclick: () => act(claim, { retry: true }) }, "Claim the match") : null,
    );
  }

  // Every second: the countdown, without drawing the table again, until it reaches zero.
  function tick() {
    const v = S.view;
    if (!v || v.status !== "active" || !v.deadline) return;
    const left = Date.parse(v.deadline) - serverNow();
    const out = el.querySelector("#clock-left");
    if (out) out.textContent = remainingText(left);
    el.querySelector("#clock")?.classList.toggle("low", left > 0 && left < 10_000);
    const key = `${v.version} ${v.deadline}`;
    if (left <= 0 && S.expired !== key) {
      S.expired = key;
      S.claimTries = 0;
      render();
      clearTimeout(claimTimer);
      claimTimer = setTimeout(claimCheck, 400);
    }
  }

  // The other seat's time is up: the service lists the claim once it judges so (its own
  // clock); ask a few times, a couple of seconds apart.
  let claimTimer = null;
  async function claimCheck() {
    const v = S.view;
    if (!v || v.status !== "active" || !v.deadline || hotseat || v.turn === v.seat) return;
    if (Date.parse(v.deadline) > serverNow() || v.legal_actions.some((a) => a.type === "claim_timeout")) return;
    if (S.claimTries++ >= 6) return;
    await quietRefresh();
    claimTimer = setTimeout(claimCheck, 2000);
  }

  // Every 3 seconds, for a match against a person on another device: a finished match
  // asks whether the other player made the rematch (for 2 minutes, then every 15 s, for
  // half an hour); a match being played refreshes the other player's presence every 9 s
  // (moves never wait for this: they come through the stream).
  let slowTicks = 0;
  function background() {
    slowTicks++;
    const v = S.view;
    if (!v || S.busy || document.hidden || !online(v)) return;
    if (v.status === "finished") {
      if (v.rematch || v.end_reason === "aborted") return;
      const since = Date.now() - (S.finishedSeen ?? Date.now());
      if (since < 120_000 || (since < 1_800_000 && slowTicks % 5 === 0)) quietRefresh();
    } else if (v.status === "active" && slowTicks % 3 === 0) {
      quietRefresh();
    }
  }

  function visible() {
    if (!document.hidden) quietRefresh();
  }

  function cover(v, names) {
    const next = v.turn;
    return h(
      "section.panel.cover#cover",
      { dataset: { next } },
      h("h2", {}, `Pass the device to ${names[next]}`),
      h("p", {}, `${names[1 - next]}'s cards are hidden. ${names[next]}, reveal your hand when the other player is not looking.`),
      S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null,
      h("button.primary#reveal", { type: "button", onclick: () => reveal(next) }, `Reveal ${names[next]}'s hand`),
    );
  }

  async function reveal(seat) {
    S.shown = seat;
    S.previousHand = null;
    S.drawn = null;
    try {
      await load(seat);
    } catch (err) {
      toast(problemText(err), "error");
    }
    render();
  }

  function tableParts(v, names) {
    const me = v.seat;
    const opp = 1 - me;
    const legal = v.legal_actions.filter((a) => !ENDINGS.has(a.type)); // the plays only
    const find = (type, extra = {}) => legal.find((a) => a.type === type && Object.entries(extra).every(([k, x]) => a[k] === x));
    const myTurn = v.turn === me;

    // Opponent: card backs, and the cards known to be in that hand.
    const oppEl = h(
      "section.opponent",
      { "aria-label": "Opponent" },
      h("div.who", {}, h("b", {}, seatLabel(v.seats[opp])), ` · ${v.opponent.card_count} cards`),
      h("div.backs", {}, Array.from({ length: v.opponent.card_count }, () => cardBack({ small: true }))),
      v.opponent.known_cards.length
        ? h("div.known", {}, "Took from the pile: ", v.opponent.known_cards.map((c) => cardElement(c, { small: true })))
        : null,
    );

    // Piles.
    const stockAction = find("draw", { source: "stock" });
    const pileAction = find("draw", { source: "discard" });
    const top = v.discard_pile[v.discard_pile.length - 1];
    const hinted = (a) => (isHinted(v, a) ? ".hinted" : "");
    const stock = h(
      `button.pile.stock${hinted(stockAction)}#stock`,
      { type: "button", disabled: !stockAction || S.busy, onclick: () => act(stockAction), "aria-label": `Stock, ${v.stock_count} cards${stockAction ? ": draw" : ""}${hinted(stockAction) ? " (the hint)" : ""}` },
      v.stock_count ? cardBack() : h("span.card.empty"),
      h("span.count", {}, `${v.stock_count}`),
      hinted(stockAction) ? h("span.hint-tag", { "aria-hidden": "true" }, "hint") : null,
    );
    const under = v.discard_pile[v.discard_pile.length - 2];
    const pile = h(
      `button.pile.discard${hinted(pileAction)}#pile`,
      { type: "button", disabled: !pileAction || S.busy, onclick: () => act(pileAction), "aria-label": top ? `Discard pile, ${cardName(top)} on top${pileAction ? ": take it" : ""}${hinted(pileAction) ? " (the hint)" : ""}` : "Discard pile, empty" },
      under ? h("span.under", {}, cardElement(under)) : null,
      top ? cardElement(top) : h("span.card.empty"),
      h("span.count", {}, `${v.discard_pile.length}`),
      hinted(pileAction) ? h("span.hint-tag", { "aria-hidden": "true" }, "hint") : null,
    );
    const passAction = find("pass");
    const piles = h(
      "section.piles",
      { "aria-label": "Piles" },
      h("div.pilebox", {}, stock, h("span.label", {}, "Stock", v.rules.dead_hand_stock ? ` · dead at ${v.rules.dead_hand_stock}` : "")),
      h("div.pilebox", {}, pile, h("span.label", {}, v.phase === "upcard_offer" ? "Upcard" : "Discard pile")),
      passAction ? h(`button${hinted(passAction)}#pass`, { type: "button", onclick: () => act(passAction), disabled: S.busy }, "Pass") : null,
    );

    const arranging = Boolean(S.arrange) && v.phase === "discard" && myTurn;
    const status = h("p.status#status", { role: "status" }, arranging ? "Lay out your melds, then knock." : statusText(v, names, { stockAction, pileAction }));
    const coach = arranging ? null : coachPart(v);
    const log = S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null;
    const defense = v.phase === "defense" && myTurn ? defensePanel(v, names) : null;
    // Arranging or defending, the step holds the cards: the hand is not shown twice.
    const mine = arranging ? arrangePanel(v) : defense ? null : handPanel(v, names, find);
    return [oppEl, piles, status, coach, log, defense, mine].filter(Boolean);
  }

  // --- the coach: a hint for the seat to act -------------------------------------------

  const HINT_PHASES = new Set(["upcard_offer", "draw", "discard"]);

  // The hint (or its refusal) asked for at the position on screen: any play, or any
  // other event, makes it stale, and it is no longer shown.
  const coachHere = (v) => (S.coach && S.coach.seat === v.seat && S.coach.version === v.version ? S.coach : null);
  const samePlay = (a, b) => a.type === b.type && (a.source ?? null) === (b.source ?? null) && (a.card ?? null) === (b.card ?? null);
  function isHinted(v, action) {
    const here = coachHere(v);
    return Boolean(here && here.action && action && samePlay(here.action, action));
  }

  function coachPart(v) {
    if (v.rules.hints !== true || v.turn !== v.seat || !HINT_PHASES.has(v.phase)) return null;
    const here = coachHere(v);
    const top = v.discard_pile[v.discard_pile.length - 1];
    let said = null;
    if (here && here.refused) said = h("p.coach-said.refused#hint-text", { role: "status" }, here.refused);
    else if (here) {
      const text = playText(here.action, top);
      said = h(
        "p.coach-said#hint-text",
        { role: "status", dataset: { action: JSON.stringify(here.action) } },
        h("b", {}, `Hint: ${text.charAt(0).toUpperCase()}${text.slice(1)}`),
        " — ",
        h("span#hint-reason", {}, here.reason),
      );
    }
    return h(
      "div.coach#coach",
      {},
      h(
        "button.hint-button#hint",
        { type: "button", disabled: S.busy || S.asking || Boolean(here), onclick: askHint, "aria-label": "Hint: the coach's play for this turn", title: "The coach's play for this turn (H)" },
        S.asking ? "Thinking…" : "Hint",
      ),
      here && here.action ? h("button#play-hint", { type: "button", disabled: S.busy, onclick: () => act(here.action), "aria-label": `Play the hint: ${playText(here.action, top)}` }, "Play it") : null,
      // Only a match between two players is rated: the note matters there only.
      online(v) && !here ? h("span.hint#hint-note", {}, "A match with a hint is not rated.") : null,
      said,
    );
  }

  async function askHint() {
    const v = S.view;
    if (!v || S.busy || S.asking) return;
    const seat = v.seat;
    S.asking = true;
    render();
    let stale = false;
    try {
      const hint = await api.hint(id, token(seat));
      S.coach = { seat, version: hint.version, action: hint.action, reason: hint.reason };
      // The hint is recorded as one event (hint_shown): the table is the same, one
      // version on, and a play is posted against that version.  A refresh still on its
      // way was asked before it: its answer is older.
      S.generation++;
      const known = S.view.version === hint.version || (hint.new && S.view.version + 1 === hint.version);
      if (S.view.seat === seat && known) S.view = { ...S.view, version: hint.version };
      else stale = true;
    } catch (err) {
      S.coach = { seat, version: v.version, refused: problemText(err) };
      stale = err instanceof ApiError && err.status === 409 && err.rule !== "hints_off";
    }
    S.asking = false;
    if (stale) await refresh();
    else render();
  }

  function statusText(v, names, { stockAction, pileAction }) {
    const me = v.seat;
    const top = v.discard_pile[v.discard_pile.length - 1];
    if (v.turn !== me) return v.turn === null ? "" : `Waiting for ${names[v.turn]}…`;
    if (v.phase === "upcard_offer") return `Take the upcard ${pretty(top)} (click the pile) or pass.`;
    if (v.phase === "draw") {
      if (!pileAction) return "Draw from the stock: the upcard was passed by both players.";
      return `Your turn: draw from the stock or take ${pretty(top)} from the discard pile.`;
    }
    if (v.phase === "discard") {
      if (v.no_return) return `You took ${pretty(v.no_return)} from the pile: it cannot go back this turn. Choose a card to discard.`;
      return "Choose a card to discard: click it once to select, again to discard.";
    }
    if (v.phase === "defense") return `${names[v.knock.seat]} knocked: choose your melds and layoffs, then confirm your defense.`;
    return "";
  }

  function handPanel(v, names, find) {
    const discarding = v.phase === "discard" && v.turn === v.seat;
    const enders = new Map(v.legal_actions.filter((a) => (a.type === "knock" || a.type === "gin") && a.card).map((a) => [a.card, a]));
    const sel = S.selected;
    const coach = coachHere(v);
    const makeCard = (card) => {
      const c = cardElement(card, { button: true });
      c.tabIndex = card === (S.focus || S.selected) ? 0 : -1;
      if (card === sel) c.classList.add("selected"), c.setAttribute("aria-pressed", "true");
      let label = cardName(card);
      if (card === S.drawn) {
        // The ring says which card came in; the tag and the label say so in words.
        c.classList.add("drawn");
        c.title = "The card you just drew";
        c.append(h("span.drawn-tag", { "aria-hidden": "true" }, "just drawn"));
        label += ", just drawn";
      }
      if (card === v.no_return && discarding) {
        c.classList.add("no-return");
        c.setAttribute("aria-disabled", "true");
        c.title = "Taken from the pile this turn: it cannot be discarded now";
        c.append(h("span.lock", { "aria-hidden": "true" }, "↩✕"));
      }
      if (discarding && coach && coach.action && coach.action.card === card) {
        c.classList.add("hinted");
        c.append(h("span.hint-tag", { "aria-hidden": "true" }, "hint"));
        label += " (the hint)";
      }
      c.setAttribute("aria-label", label);
      if (discarding && enders.has(card)) {
        c.classList.add("can-end");
        c.append(h("span.badge", { title: enders.get(card).type === "gin" ? "discard it to go Gin" : "discard it to knock" }, enders.get(card).type === "gin" ? "G" : "K"));
      }
      c.addEventListener("click", () => cardClicked(card));
      return c;
    };
    const handEl = handElement(v.hand, v.melds, S.sort, makeCard);
    handEl.id = "hand";
    handEl.setAttribute("role", "group");
    handEl.setAttribute("aria-label", `${names[v.seat]}'s hand`);
    handEl.dataset.seat = v.seat;
    handEl.addEventListener("keydown", handKeys);
    if (!handEl.querySelector("[tabindex='0']")) handEl.querySelector(".card")?.setAttribute("tabindex", "0");

    // Deadwood, live: of the hand as it is, and after the selected discard.
    let preview = null;
    if (discarding && sel) {
      const after = bestMelds(v.hand.filter((c) => c !== sel));
      const end = enders.get(sel);
      preview = h(
        "span.preview#preview",
        {},
        ` · discard ${pretty(sel)} → ${after.deadwood}`,
        end ? (end.type === "gin" ? " (Gin!)" : " (you may knock)") : "",
      );
    }
    const deadwood = h(
      "p.deadwood#deadwood",
      {},
      h("span", {}, `${names[v.seat]} · deadwood `),
      h("b#deadwood-value", {}, String(v.deadwood)),
      v.hand.length === 11 ? h("span.hint", {}, " (11 cards)") : null,
      preview,
    );

    const selAction = (type) => (sel ? v.legal_actions.find((a) => a.type === type && a.card === sel) : null);
    const discardA = selAction("discard");
    const knockA = selAction("knock");
    const ginA = selAction("gin");
    const knockable = [...enders.keys()];
    const sortButton = (mode, label) =>
      h(`button.sort${S.sort === mode ? ".on" : ""}`, { type: "button", "aria-pressed": String(S.sort === mode), onclick: () => setSort(mode) }, label);
    const controls = h(
      "div.controls",
      {},
      h("div.sorts", { role: "group", "aria-label": "Sort" }, "Sort: ", sortButton("melds", "Melds"), sortButton("rank", "Rank"), sortButton("suit", "Suit")),
      h(
        "div.acts",
        { hidden: !(v.turn === v.seat && (v.phase === "draw" || v.phase === "discard")) },
        h("button#discard", { type: "button", disabled: !discardA || S.busy, onclick: () => act(discardA) }, "Discard"),
        h("button.knock#knock", { type: "button", disabled: !knockA || S.busy, onclick: () => knockPressed(knockA) }, "Knock"),
        h("button.gin#gin", { type: "button", disabled: !ginA || S.busy, onclick: () => act(ginA) }, "Gin"),
      ),
    );
    const hint =
      discarding && knockable.length && !knockA && !ginA
        ? h("p.hint#end-hint", {}, `You can ${enders.get(knockable[0]).type === "gin" ? "go Gin" : "knock"}: select ${knockable.map(pretty).join(" or ")} (marked K/G) to discard.`)
        : null;
    return h("section.mine", { "aria-label": "Your hand" }, deadwood, handEl, controls, hint, keysHelp(v));
  }

  function keysHelp(v) {
    return h(
      "details.keys",
      {},
      h("summary", {}, "Keyboard"),
      h("p", {}, `S draw from the stock · P take from the pile · ←/→ move between cards · Enter or Space select, then discard · D discard · K knock · G Gin · A pass the upcard${v.rules.hints === true ? " · H a hint" : ""}`),
    );
  }

  function setSort(mode) {
    S.sort = mode;
    setPref("sort", mode);
    render();
  }

  function cardClicked(card) {
    const v = S.view;
    S.focus = card;
    if (!(v.phase === "discard" && v.turn === v.seat) || S.busy) {
      if (v.phase === "draw" && v.turn === v.seat) toast("Draw first: click the stock or the discard pile.");
      return;
    }
    if (card === v.no_return) {
      toast(`${pretty(card)} was taken from the pile this turn: it cannot be discarded now.`);
      return;
    }
    if (S.selected === card) {
      const a = v.legal_actions.find((x) => x.type === "discard" && x.card === card);
      if (a) act(a);
      return;
    }
    S.selected = card;
    render();
  }

  function handKeys(event) {
    const cards = [...el.querySelectorAll("#hand .card")];
    const i = cards.indexOf(document.activeElement);
    if (i < 0) return;
    let next = null;
    if (event.key === "ArrowRight" || event.key === "ArrowDown") next = cards[(i + 1) % cards.length];
    if (event.key === "ArrowLeft" || event.key === "ArrowUp") next = cards[(i - 1 + cards.length) % cards.length];
    if (event.key === "Home") next = cards[0];
    if (event.key === "End") next = cards[cards.length - 1];
    if (next) {
      event.preventDefault();
      cards.forEach((c) => (c.tabIndex = -1));
      next.tabIndex = 0;
      next.focus();
      S.focus = next.dataset.card;
    }
  }

  function tableKeys(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !S.view || event.target.matches("input, select, textarea")) return;
    const key = event.key.toLowerCase();
    const click = (sel) => {
      const b = el.querySelector(sel);
      if (b && !b.disabled) {
        event.preventDefault();
        b.click();
      }
    };
    if (key === "s") click("#stock");
    else if (key === "p") click("#pile");
    else if (key === "d") click("#discard");
    else if (key === "k") click("#knock");
    else if (key === "g") click("#gin");
    else if (key === "a") click("#pass");
    else if (key === "h") click("#hint");
  }
  document.addEventListener("keydown", tableKeys);

  // --- the knocker's arrangement step ------------------------------------------------

  // A change to a step of melds (the knocker's or the defender's): what it says (why it
  // cannot be done, or, as `kind` "info", what else it did) is shown, then the step again.
  const stepEdit = (step, fn, kind = "error") => (...args) => {
    const said = fn(...args);
    if (said) toast(said, kind);
    step.error = null;
    render();
  };

  // Knock pressed with a card chosen: straight to the service when the melds leave no
  // choice, else the step, opened with the best melds made.
  function knockPressed(action) {
    const v = S.view;
    const kept = v.hand.filter((c) => c !== action.card);
    const best = bestMelds(kept);
    if (!v.rules.knocker_arranges && !hasChoiceOfLeast(kept)) {
      act(action);
      return;
    }
    S.arrange = { version: v.version, seat: v.seat, action, least: best.deadwood, suggested: best.melds, error: null, ...arrangement(kept, best.melds) };
    render();
    el.querySelector("#confirm-knock")?.focus();
  }

  function arrangePanel(v) {
    const A = S.arrange;
    const loose = looseCards(A);
    const deadwood = deadwoodOf(loose);
    const limit = v.rules.knock_limit;
    const free = v.rules.knocker_arranges;
    let verdict = null;
    if (deadwood > limit) verdict = `That is over the knock limit of ${limit}: make melds of more cards to knock.`;
    else if (!free && deadwood > A.least) verdict = `Under these rules you lay out an arrangement of your least deadwood, ${A.least}.`;
    const changed = (fn) => stepEdit(A, fn);
    return h(
      "section.panel.arrange#arrange",
      { "aria-label": "Lay out your melds" },
      h("h2", {}, `Knock, discarding ${pretty(A.action.card)}: lay out your melds`),
      h(
        "p.hint",
        {},
        free
          ? `Lay out any melds you like, as long as your deadwood stays within the knock limit (${limit}): the other player may lay off cards onto them. Your least deadwood is made already.`
          : `Your cards make more than one arrangement with your least deadwood (${A.least}): choose the one the other player can lay off least onto.`,
        " Break a meld to free its cards, pick loose cards and Make meld; or let the service choose: of your arrangements of the least deadwood, it lays out the one that leaves the other player the most deadwood.",
      ),
      benchElement(A, { onPick: changed((c) => pick(A, c)), onMake: changed(() => makeMeld(A)), onBreak: changed((i) => breakMeld(A, i)), label: "Your ten cards" }),
      h(
        "p.arrange-count",
        {},
        "Deadwood ",
        h("b#arrange-deadwood", {}, String(deadwood)),
        ` (the knock limit is ${limit})`,
        loose.length ? `: ${cardsText(loose)}` : ": none, Gin",
        ". ",
        verdict ? h("span.over#arrange-verdict", {}, verdict) : null,
      ),
      A.error ? h("p.error#arrange-error", { role: "alert" }, `Refused: ${A.error}`) : null,
      h(
        "div.actions",
        {},
        h(
          "button.knock#confirm-knock",
          { type: "button", disabled: Boolean(verdict) || S.busy, onclick: () => knockWith(A) },
          deadwood === 0 ? "Go Gin" : verdict ? "Knock" : `Knock with ${deadwood}`,
        ),
        h("button#arrange-auto", { type: "button", disabled: S.busy, title: "The service, which knows both hands, lays out the arrangement of your least deadwood that leaves the other player the most deadwood", onclick: () => act(A.action) }, "Let the service choose"),
        h("button#arrange-best", { type: "button", disabled: sameMelds(A.melds, A.suggested), onclick: changed(() => void Object.assign(A, arrangement(A.cards, A.suggested))) }, "Best melds"),
        h("button#arrange-cancel", { type: "button", onclick: () => ((S.arrange = null), render()) }, "Back"),
      ),
    );
  }

  // The knock carries the melds shown (all ten melded is Gin, whatever the button said).
  function knockWith(A) {
    const action = { type: "knock", card: A.action.card, melds: A.melds.map((m) => [...m]) };
    act(action, { refused: (text) => S.arrange === A && (A.error = text) });
  }

  // --- the defense step ----------------------------------------------------------------

  // The defender's own melds and layoffs, opened with the suggested best defense; the
  // person may break and make melds and lay loose cards off onto the knocker's melds
  // (each knocker's meld with what is laid off onto it must stay one legal meld; the
  // service puts the layoffs in the order they can be made, chains included).
  function defenseChoice(v) {
    const suggestion = v.legal_actions.find((a) => a.type === "defend");
    if (!S.defend) {
      S.defend = { version: v.version, seat: v.seat, suggestion, error: null, ...arrangement(v.hand, suggestion.melds), layoffs: suggestion.layoffs.map((x) => ({ ...x })) };
    }
    return S.defend;
  }

  function layOff(D, knock, meld) {
    const onto = [...knock.melds[meld], ...D.layoffs.filter((x) => x.meld === meld).map((x) => x.card)];
    if (!D.picked.length) return "Pick a loose card of yours first, then the meld to lay it off onto.";
    if (!meldKind([...onto, ...D.picked])) {
      return `${cardsText(D.picked)} cannot be laid off onto ${cardsText(onto)}: a run grows only at its ends, a set only to four cards.`;
    }
    D.layoffs.push(...D.picked.map((card) => ({ card, meld })));
    D.picked = [];
    return null;
  }

  // A card laid off comes back; so do the cards of the same meld that were laid off
  // beyond it (9♠ after 8♠ onto 5-6-7♠), and only those (4♠ stays).
  function takeBack(D, knock, card) {
    const x = D.layoffs.find((y) => y.card === card);
    let rest = D.layoffs.filter((y) => y.meld === x.meld && y !== x).map((y) => y.card);
    D.layoffs = D.layoffs.filter((y) => y.meld !== x.meld);
    const onto = [...knock.melds[x.meld]];
    for (let joined = true; joined; ) {
      const next = rest.find((c) => meldKind([...onto, c]));
      joined = Boolean(next);
      if (joined) {
        onto.push(next);
        D.layoffs.push({ card: next, meld: x.meld });
        rest = rest.filter((c) => c !== next);
      }
    }
    return rest.length ? `${cardsText(rest)} came back too: laid off beyond ${pretty(card)}.` : null;
  }

  function defensePanel(v, names) {
    const knock = v.knock;
    const D = defenseChoice(v);
    const laidOff = D.layoffs.map((x) => x.card);
    const left = looseCards(D, laidOff);
    const mine = deadwoodOf(left);
    const outcome =
      mine <= knock.deadwood
        ? `Undercut: you score ${knock.deadwood - mine} + ${v.rules.undercut_bonus}.`
        : `${says(names[knock.seat], "scores")} ${mine - knock.deadwood}.`;
    const changed = (fn, kind) => stepEdit(D, fn, kind);
    const knockerMelds = h(
      "div.laid",
      {},
      knock.melds.map((meld, i) => {
        const onto = D.layoffs.filter((y) => y.meld === i).map((y) => y.card);
        const fits = D.picked.length > 0 && Boolean(meldKind([...meld, ...onto, ...D.picked]));
        const row = h(
          `div.row.meld.target.m${i % 4}${fits ? ".fits" : ""}`,
          // The whole row takes the cards picked (its button says so, for the keyboard).
          { dataset: { meld: i }, onclick: (e) => !e.target.closest("button") && D.picked.length && changed(() => layOff(D, knock, i))() },
          h("span.n", {}, `${i + 1}`),
          meld.map((c) => cardElement(c, { small: true })),
          onto.map((c) => {
            const b = cardElement(c, { button: true, small: true });
            b.classList.add("laidoff");
            b.title = "Laid off: click to take it back";
            b.setAttribute("aria-label", `${cardName(c)}, laid off onto meld ${i + 1}: take it back`);
            b.addEventListener("click", changed(() => takeBack(D, knock, c), "info"));
            return b;
          }),
          h(
            "button.lay-here",
            { type: "button", id: `lay-off-${i}`, disabled: !fits || S.busy, onclick: changed(() => layOff(D, knock, i)), "aria-label": `Lay off the cards picked onto meld ${i + 1}` },
            D.picked.length ? `Lay off ${cardsText(D.picked)} here` : "Lay off here",
          ),
        );
        return row;
      }),
    );
    const layoffsKey = (layoffs) => layoffs.map((x) => `${x.card}>${x.meld}`).sort().join(" ");
    const asSuggested = sameMelds(D.melds, D.suggestion.melds) && layoffsKey(D.layoffs) === layoffsKey(D.suggestion.layoffs);
    return h(
      "section.panel.defense#defense",
      { "aria-label": "Defense" },
      h("h2", {}, `${says(names[knock.seat], "knocks")} with ${knock.deadwood} (discarded ${pretty(knock.card)})`),
      h("p", {}, `${names[knock.seat]}'s melds${D.layoffs.length ? ", with your layoffs" : ""}: pick loose cards of yours, then Lay off here (click a card laid off to take it back).`),
      knockerMelds,
      h("h3", {}, "Your melds"),
      benchElement(D, { aside: laidOff, onPick: changed((c) => pick(D, c)), onMake: changed(() => makeMeld(D)), onBreak: changed((i) => breakMeld(D, i)), label: "Your cards", layOff: true }),
      h(
        "p.defense-count",
        {},
        "Your deadwood after the layoffs: ",
        h("b#defense-deadwood", {}, String(mine)),
        left.length ? ` (${cardsText(left)})` : "",
        ". ",
        outcome,
        asSuggested ? h("span.hint", {}, " This is the suggested best defense.") : null,
      ),
      D.error ? h("p.error#defense-error", { role: "alert" }, `Refused: ${D.error}`) : null,
      h(
        "div.actions",
        {},
        h("button.primary#confirm-defense", { type: "button", disabled: S.busy, onclick: () => defendWith(D) }, "Confirm defense"),
        h("button#defense-suggestion", { type: "button", disabled: asSuggested || S.busy, onclick: () => ((S.defend = null), render()) }, "Use the suggestion"),
      ),
    );
  }

  // The defense sent whole, melds and layoffs: what is shown is what is played.  (A
  // defend with layoffs alone would keep the best melds of the rest.)
  function defendWith(D) {
    const action = { type: "defend", melds: D.melds.map((m) => [...m]), layoffs: D.layoffs.map((x) => ({ card: x.card, meld: x.meld })) };
    act(action, { refused: (text) => S.defend === D && (D.error = text) });
  }

  // --- the hand result ---------------------------------------------------------------

  function resultPanel(v, names) {
    const hand = v.last_hand;
    const finished = v.status === "finished";
    const reason = v.end_reason;
    const byScore = !reason || reason === "score";
    const totals = h("p.totals", {}, "Score: ", v.seats.map((s, i) => `${s.name} ${v.scores[i]}`).join(" · "), finished ? "" : ` (to ${v.rules.target_score})`);
    const buttons = h("div.actions");
    const replay = hand ? h("a.button#replay-link", { href: `#/replay/${id}/${hand.hand}` }, "Replay this hand") : null;
    let rematchNote = null;
    if (!finished) {
      buttons.append(...[h("button.primary#next-hand", { type: "button", onclick: () => dismissResult(hand.hand) }, "Next hand"), replay].filter(Boolean));
    } else {
      const known = Boolean(v.rematch) && holds(savedMatch(v.rematch));
      const label = known ? "Go to the rematch" : v.rematch ? "Join the rematch" : "Rematch";
      const rematchButton = h("button.primary#rematch", { type: "button", disabled: S.rematching, onclick: rematch }, label);
      if (v.rematch && !known && online(v)) rematchNote = h("p.rematch-note#rematch-note", {}, `${names[1 - v.seat]} wants a rematch: the seats are swapped, so the other player starts.`);
      buttons.append(...[rematchButton, replay, h("button#export", { type: "button", onclick: exportRecord }, "Export record"), h("a.button", { href: "#/" }, "New match")].filter(Boolean));
    }
    let ending = null;
    if (finished && byScore && v.winner !== null) {
      ending = h("h2.match-winner#end-reason", { dataset: { reason: "score" } }, `${says(names[v.winner], "wins")} the match ${Math.max(...v.scores)}–${Math.min(...v.scores)}`);
    } else if (finished && !byScore) {
      ending = h("h2.match-winner#end-reason", { dataset: { reason } }, endText(reason, v.winner, names));
    }
    // Resigned or timed out: the hand being played was not scored; the last one that was
    // is shown while it is news to this player.
    let handPart;
    if (hand && (byScore || hand.hand > S.resultSeen)) handPart = resultElement(hand, names, v.rules);
    else if (byScore) handPart = h("p", {}, "No hand was completed.");
    else handPart = h("p.hint", {}, "The hand being played was not scored.");
    return h(
      "section.panel.result-panel#result",
      { dataset: { reason: reason || "" } },
      finished ? h("p.hint", {}, "Match over") : null,
      ending,
      handPart,
      totals,
      rematchNote,
      buttons,
    );
  }

  // The same match again, seats swapped: the first seat to ask makes it, the other joins
  // it; each gets its seat token in the rematch when it first asks.  A player's seats
  // stay the player's in the rematch: the player token opens it, no seat token is kept.
  async function rematch() {
    const v = S.view;
    if (v.rematch && holds(savedMatch(v.rematch))) {
      location.hash = `#/play/${v.rematch}`;
      return;
    }
    S.rematching = true;
    render();
    if (!bySeat) {
      try {
        const { body } = await api.rematch(id, me.token);
        saveMatch(body.id, { player: me.id, mode: entry.mode || (online(v) ? "online" : "computer"), rematchOf: id, created: new Date().toISOString(), resultSeen: 0 });
        location.hash = `#/play/${body.id}`;
      } catch (err) {
        toast(problemText(err), "error");
        S.rematching = false;
        render();
      }
      return;
    }
    try {
      const tokens = {};
      let next = null;
      for (const seat of mySeats) {
        const { body } = await api.rematch(id, token(seat));
        next = body.id;
        if (body.token) tokens[body.seat] = body.token;
      }
      const known = savedMatch(next);
      if (!Object.keys(tokens).length && !seatsOf(known).length) {
        throw new Error("This browser asked for the rematch before, but no longer holds its seat token.");
      }
      saveMatch(next, {
        tokens: { ...(known?.tokens || {}), ...tokens },
        mode: entry.mode || (hotseat ? "hotseat" : "computer"),
        rematchOf: id,
        created: new Date().toISOString(),
        resultSeen: 0,
      });
      location.hash = `#/play/${next}`;
    } catch (err) {
      toast(problemText(err), "error");
      S.rematching = false;
      render();
    }
  }

  // --- waiting for the friend ----------------------------------------------------------

  function waitingPanel(v, names) {
    const invite = entry.invite;
    const abort = v.legal_actions.find((a) => a.type === "abort");
    let link;
    if (invite) {
      const input = h("input#invite-url", { type: "text", readonly: true, value: invite.url, "aria-label": "Invite link", onfocus: (e) => e.target.select() });
      const copy = h("button.primary#copy", { type: "button", onclick: () => copyField(input, "Link copied: send it to your friend.") }, "Copy");
      const share = navigator.share ? h("button#share", { type: "button", onclick: () => shareLink(invite.url, names[v.seat]) }, "Share") : null;
      link = h(
        "div.invite",
        {},
        h("label", { for: "invite-url" }, "Send this link to your friend:"),
        h("div.invite-row", {}, input, h("div.invite-buttons", {}, copy, share)),
      );
    } else {
      link = h("p#no-invite", {}, "The invite link was shown when the match was made and is not kept in this browser.", entry.public ? " The match is listed in the lobby." : "");
    }
    return h(
      "section.panel.waiting-panel#waiting-panel",
      {},
      h("h1", {}, "Play a friend"),
      h("p.hint", {}, `${v.rules.preset} · ${matchLength(v.rules)} · ${clockText(v.rules.turn_seconds)}${entry.public ? " · listed in the lobby" : ""}`),
      link,
      h("p.waiting#waiting", { role: "status" }, h("span.spinner", { "aria-hidden": "true" }), "Waiting for your friend…"),
      h("p.hint", {}, `The table opens by itself when they join. You may leave this page: the match stays in ${bySeat ? "the Continue list of the new-match page" : "My games"}.`),
      h("div.actions", {}, abort ? h("button#cancel", { type: "button", disabled: S.busy, onclick: () => act(abort, { retry: true }) }, "Cancel the match") : null),
    );
  }

  async function shareLink(url, name) {
    try {
      await navigator.share({ title: "Gin Rummy", text: `${name} invites you to a game of Gin Rummy`, url });
    } catch (err) {
      if (err && err.name !== "AbortError") toast("Could not share the link: copy it instead.", "error");
    }
  }

  function abortedPanel() {
    return h(
      "section.panel#aborted",
      {},
      h("h1", {}, "Match called off"),
      h("p", {}, endText("aborted")),
      h("div.actions", {}, h("a.button.primary", { href: "#/" }, "New match"), h("a.button", { href: "#/lobby" }, "Lobby")),
    );
  }

  function dismissResult(n) {
    S.resultSeen = n;
    saveMatch(id, { resultSeen: n });
    if (hotseat) S.shown = null;
    render();
  }

  async function exportRecord() {
    try {
      const record = await api.exportRecord(id, token(viewSeat()));
      downloadText(`gin-rummy-${id}.json`, record);
    } catch (err) {
      toast(problemText(err), "error");
    }
  }

  // --- start ---------------------------------------------------------------------------

  let stopStream = () => {};
  render();
  const ticker = setInterval(tick, 1000);
  const slow = setInterval(background, 3000);
  document.addEventListener("visibilitychange", visible);
  load(viewSeat())
    .then(() => {
      render();
      // Also while waiting for the friend: seat_joined and the deal arrive on the stream.
      if (S.view.status !== "finished") stopStream = followStream(id, token(mySeats[0]), S.view.version, onStreamEvent);
    })
    .catch((err) => {
      if (!bySeat && err instanceof ApiError && err.status === 403) {
        el.replaceChildren(
          h("section.panel#not-yours", {}, h("h1", {}, "Not your match"),
            h("p", {}, `${me.name}, the player this browser plays as, holds no seat of this match, and this browser keeps no seat token of it.`),
            h("div.actions", {}, h("a.button", { href: "#/games" }, "My games"), h("a.button", { href: "#/history" }, "History"))),
        );
        return;
      }
      el.replaceChildren(
        h("section.panel", {}, h("h1", {}, "This match cannot be shown"), h("p", {}, problemText(err)), h("a", { href: bySeat ? "#/history" : "#/games" }, bySeat ? "History" : "My games")),
      );
    });

  return () => {
    stopStream();
    clearTimeout(pendingRefresh);
    clearTimeout(claimTimer);
    clearInterval(ticker);
    clearInterval(slow);
    document.removeEventListener("keydown", tableKeys);
    document.removeEventListener("visibilitychange", visible);
  };
}
