// The table's view kept up to date: fetched (only the newest answer counts), followed on
// the match's event stream, refreshed quietly in the background, and the actions sent.
// `T` is the table context (table.js).

import { ApiError, api } from "./api.js";
import { pretty } from "./cards.js";
import { countChanged } from "./header.js";
import { saveMatch } from "./saved.js";
import { problemText, toast } from "./ui.js";

export const token = (T, seat) => (T.bySeat ? T.entry.tokens[seat] : T.me.token);

// A person on another device (or a seat still open): not the computer, not this device.
export const online = (T, v) => !T.hotseat && v.seats[1 - v.seat].kind !== "computer";

export const viewSeat = (T) => (T.hotseat ? (T.S.shown ?? T.mySeats[0]) : T.mySeats[0]);

// Only the newest request's answer counts: a slower, older one never overwrites it.
export async function load(T, seat) {
  const { S } = T;
  const generation = ++S.generation;
  const view = await api.view(T.id, token(T, seat));
  if (generation === S.generation) accept(T, view);
}

function accept(T, view) {
  const { S, id, entry, me, hotseat } = T;
  const seat = view.seat;
  if (!T.bySeat) {
    T.mySeats = [seat];
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

export async function refresh(T) {
  if (T.S.busy) return;
  try {
    await load(T, viewSeat(T));
  } catch (err) {
    toast(problemText(err), "error");
  }
  T.render();
}

// A refresh in the background (presence, the rematch, a timeout claim): drawn only
// when something shown changed, so that it never disturbs a player choosing a card.
const signature = (v) => v && JSON.stringify([v.version, v.opponent.connected, v.rematch, v.deadline, v.legal_actions.map((a) => a.type)]);
export async function quietRefresh(T) {
  const { S } = T;
  if (S.busy || !S.view) return;
  const generation = ++S.generation;
  try {
    const view = await api.view(T.id, token(T, viewSeat(T)));
    if (generation !== S.generation || S.busy) return;
    const before = signature(S.view);
    accept(T, view);
    if (signature(S.view) !== before) T.render();
  } catch {
    // the next event, or the next refresh, tries again
  }
}

export function onStreamEvent(T, event) {
  const { S } = T;
  S.streamSeq = Math.max(S.streamSeq, event.seq);
  if (S.busy || (S.view && event.seq <= S.view.version)) return; // act() catches up when it is done
  if (event.type === "seat_joined") toast(`${event.data.name} joined: the first hand is dealt.`);
  noteEvents(T, [event]);
  clearTimeout(T.timers.pendingRefresh);
  T.timers.pendingRefresh = setTimeout(() => {
    if (!S.view || S.streamSeq > S.view.version) refresh(T);
  }, 60);
}

// `retry`: a resignation, a timeout claim or calling off do not depend on the cards,
// so when the table changed in the meantime they are sent again if still legal (up to
// RETRIES times: a refresh of the stream's may land after the one awaited here, which
// is then not the newest and not kept, and the view is still the stale one).
// `refused(text)`: told the service's reason when it refuses the action.
const RETRIES = 3;
export async function act(T, action, { retry = false, refused = null } = {}) {
  const tries = retry === true ? RETRIES : retry || 0;
  const { S } = T;
  if (S.busy || !S.view) return;
  const seat = S.view.seat;
  S.busy = true;
  S.generation++; // a refresh still on its way is older than this action
  T.render();
  try {
    const result = await api.act(T.id, token(T, seat), S.view.version, action);
    noteEvents(T, result.events);
    accept(T, result.view);
    S.selected = null;
    S.coach = null;
  } catch (err) {
    if (err instanceof ApiError && (err.code === "version_mismatch" || err.code === "conflict")) {
      if (tries > 0) {
        S.busy = false;
        await refresh(T);
        if (S.view.legal_actions.some((a) => a.type === action.type)) return act(T, action, { retry: tries - 1, refused });
        return;
      }
      toast("The table changed in the meantime: here it is as it is now.", "info");
    } else {
      toast(problemText(err), "error");
      if (refused) refused(problemText(err));
    }
    S.busy = false;
    await refresh(T);
    return;
  }
  S.busy = false;
  T.render();
  if (S.streamSeq > S.view.version) refresh(T);
}

// What the other player did, as one line each.  Never names a card drawn from the
// stock: in a shared-device match the log is seen by both players.
function noteEvents(T, events) {
  const { S } = T;
  const names = S.view ? S.view.seats.map((s) => s.name) : ["Seat 1", "Seat 2"];
  const me = S.view ? S.view.seat : null;
  for (const e of events) {
    const d = e.data;
    const who = names[d.seat] ?? "";
    let line = null;
    if (e.type === "card_drawn") line = d.source === "stock" ? `${who} drew from the stock` : `${who} took ${pretty(d.card)} from the pile`;
    else if (e.type === "card_discarded") line = `${who} discarded ${pretty(d.card)}`;
    else if (e.type === "upcard_passed") line = `${who} passed the upcard`;
    else if (e.type === "knocked" && d.big_gin) line = `${who} laid down all eleven cards and went Big Gin`;
    else if (e.type === "knocked") line = `${who} discarded ${pretty(d.card)} and ${d.gin ? "went Gin" : `knocked with ${d.deadwood}`}`;
    else if (e.type === "hand_dealt") line = `Hand ${d.hand} dealt; ${names[d.starter]} starts`;
    else if (e.type === "seat_joined") line = `${d.name} joined the match`;
    else if (e.type === "hint_shown") line = `${who} asked for a hint`;
    else if (e.type === "match_ended" && d.reason === "resigned") line = `${names[d.seat]} resigned`;
    else if (e.type === "match_ended" && d.reason === "timeout") line = `${names[d.seat]} claimed the match on time`;
    if (line && (T.hotseat || d.seat !== me || e.type === "hand_dealt")) S.log.push(line);
  }
  S.log = S.log.slice(-4);
}

// Every 3 seconds, for a match against a person on another device: a finished match
// asks whether the other player made the rematch (for 2 minutes, then every 15 s, for
// half an hour); a match being played refreshes the other player's presence every 9 s
// (moves never wait for this: they come through the stream).
export function background(T) {
  const { S } = T;
  T.timers.slowTicks++;
  const v = S.view;
  if (!v || S.busy || document.hidden || !online(T, v)) return;
  if (v.status === "finished") {
    if (v.rematch || v.end_reason === "aborted") return;
    const since = Date.now() - (S.finishedSeen ?? Date.now());
    if (since < 120_000 || (since < 1_800_000 && T.timers.slowTicks % 5 === 0)) quietRefresh(T);
  } else if (v.status === "active" && T.timers.slowTicks % 3 === 0) {
    quietRefresh(T);
  }
}

export function onVisible(T) {
  if (!document.hidden) quietRefresh(T);
}
