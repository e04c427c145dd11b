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
// own (ENDINGS, in table-board.js), never plays; whose turn it is is view.turn.
//
// A match is opened with the seat tokens this browser keeps of it, or else with the
// player token (a match of the player's, made or joined on any device): the seat is
// then the view's.
//
// This module opens the table and draws it, panel by panel; each panel is a module:
// table-bars.js (the score and the clock), table-cover.js (between turns on one
// device), table-board.js (the piles, the status, the log), table-coach.js (the hint),
// table-hand.js, table-keys.js (the keyboard), table-arrange.js (the knocker's melds),
// table-defense.js, table-result.js, table-waiting.js (the friend not there yet, a
// match called off); table-live.js fetches the view, follows the stream and acts.
// They share one table context, `T`: the match (id, the saved entry, the player, the
// seats this browser shows), the element the table is drawn in, its state `T.S`, its
// timers, and `T.render()`.

import { ApiError, followStream } from "./api.js";
import { matchBar, scoreBar, tick } from "./table-bars.js";
import { tableParts } from "./table-board.js";
import { cover } from "./table-cover.js";
import { tableKeys } from "./table-keys.js";
import { background, load, onStreamEvent, onVisible, token, viewSeat } from "./table-live.js";
import { resultPanel } from "./table-result.js";
import { abortedPanel, waitingPanel } from "./table-waiting.js";
import { currentPlayer, pref, savedMatch, seatsOf } from "./saved.js";
import { h, problemText } from "./ui.js";

export function mountTable(root, id) {
  const entry = savedMatch(id) || {};
  const me = currentPlayer();
  const bySeat = seatsOf(entry).length > 0; // else by the player token
  if (!bySeat && !me) {
    root.append(notYoursPanel());
    return () => {};
  }
  // By the player token, the seat is the view's (the seat to act, if the player holds both).
  const mySeats = bySeat ? seatsOf(entry) : [];
  const hotseat = mySeats.length === 2;
  const T = {
    id,
    entry,
    me,
    bySeat,
    hotseat,
    mySeats, // by the player token: the view's seat, once a view came
    el: h("div.table#table"),
    S: tableState(entry, mySeats, hotseat),
    timers: { pendingRefresh: null, claimTimer: null, slowTicks: 0 },
    stopStream: () => {},
    render: () => render(T),
  };
  root.append(T.el);
  const keys = (event) => tableKeys(T, event);
  const visible = () => onVisible(T);
  document.addEventListener("keydown", keys);
  T.render();
  const ticker = setInterval(() => tick(T), 1000);
  const slow = setInterval(() => background(T), 3000);
  document.addEventListener("visibilitychange", visible);
  open(T);

  return () => {
    T.stopStream();
    clearTimeout(T.timers.pendingRefresh);
    clearTimeout(T.timers.claimTimer);
    clearInterval(ticker);
    clearInterval(slow);
    document.removeEventListener("keydown", keys);
    document.removeEventListener("visibilitychange", visible);
  };
}

// What the table knows and what the person is doing at it.
function tableState(entry, mySeats, hotseat) {
  return {
    view: null, // the last view fetched (for the seat shown, or any seat while covered)
    shown: hotseat ? null : mySeats[0], // the seat whose hand is on screen (hotseat: null = covered)
    selected: null,
    focus: undefined, // the card of the hand that has (or last had) the focus
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
}

// The first view, then the stream (also while waiting for the friend: seat_joined and
// the deal arrive on it).
function open(T) {
  const { S, el, bySeat, me } = T;
  load(T, viewSeat(T))
    .then(() => {
      T.render();
      if (S.view.status !== "finished") T.stopStream = followStream(T.id, token(T, T.mySeats[0]), S.view.version, (event) => onStreamEvent(T, event));
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
}

function notYoursPanel() {
  return h("section.panel#not-yours", {}, h("h1", {}, "Not your match"),
    h("p", {}, "This browser holds no seat token for this match, so it cannot show it. Matches you create or import here are listed in the ",
      h("a", { href: "#/history" }, "history"), "."),
    h("p", {}, "If you play it as a player on another device, use that player here: ", h("a", { href: "#/profile" }, "Continue as a guest"), " → Already a player on another device?"));
}

function render(T) {
  const { S, el, hotseat } = T;
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
    el.replaceChildren(waitingPanel(T, v, names));
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
  if (showingResult) main.push(resultPanel(T, v, names));
  else if (hotseat && (S.shown === null || S.shown !== v.turn || v.seat !== S.shown)) main.push(cover(T, v, names));
  else {
    main.push(...tableParts(T, v, names));
    handShown = true;
  }
  el.replaceChildren(...[scoreBar(T, v, newResult && v.status !== "finished"), matchBar(T, v, names, handShown), ...main].filter(Boolean));
  if (handHadFocus) {
    const target = el.querySelector(`#hand [data-card="${S.focus}"]`) || el.querySelector("#hand .card");
    if (target) target.focus();
  }
  if (stepFocus) el.querySelector(`#arrange ${stepFocus}, #defense ${stepFocus}`)?.focus();
}
