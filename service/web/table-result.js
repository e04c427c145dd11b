// The hand result between hands (Next hand, its replay), and at the end of the match
// the winner or how it ended, the rematch, the record's export.  `T` is the table
// context (table.js).

import { api } from "./api.js";
import { resultElement, settlementElement } from "./result.js";
import { holds, saveMatch, savedMatch, seatsOf } from "./saved.js";
import { online, token, viewSeat } from "./table-live.js";
import { downloadText, endText, h, problemText, says, toast } from "./ui.js";

export function resultPanel(T, v, names) {
  const { S, id } = T;
  const hand = v.last_hand;
  const finished = v.status === "finished";
  const reason = v.end_reason;
  const byScore = !reason || reason === "score";
  const totals = v.games
    ? h("p.totals", {}, "Games: ", v.games.map((g, i) => `${i + 1}. ${g.scores[0]}–${g.scores[1]}${g.winner !== null && g.winner !== undefined ? ` (${names[g.winner]})` : ""}`).join(" · "), finished ? "" : ` (each to ${v.rules.target_score})`)
    : h("p.totals", {}, "Score: ", v.seats.map((s, i) => `${s.name} ${v.scores[i]}`).join(" · "), finished ? "" : ` (to ${v.rules.target_score})`);
  const settled = finished && v.settlement ? settlementElement(v.settlement, names, v.rules) : null;
  const buttons = h("div.actions");
  const replay = hand ? h("a.button#replay-link", { href: `#/replay/${id}/${hand.hand}` }, "Replay this hand") : null;
  let rematchNote = null;
  if (!finished) {
    buttons.append(...[h("button.primary#next-hand", { type: "button", onclick: () => dismissResult(T, hand.hand) }, "Next hand"), replay].filter(Boolean));
  } else {
    const known = Boolean(v.rematch) && holds(savedMatch(v.rematch));
    const label = known ? "Go to the rematch" : v.rematch ? "Join the rematch" : "Rematch";
    const rematchButton = h("button.primary#rematch", { type: "button", disabled: S.rematching, onclick: () => rematch(T) }, label);
    if (v.rematch && !known && online(T, v)) rematchNote = h("p.rematch-note#rematch-note", {}, `${names[1 - v.seat]} wants a rematch: the seats are swapped, so the other player starts.`);
    buttons.append(...[rematchButton, replay, h("button#export", { type: "button", onclick: () => exportRecord(T) }, "Export record"), h("a.button", { href: "#/" }, "New match")].filter(Boolean));
  }
  let ending = null;
  if (finished && byScore && v.winner !== null && v.games) {
    const won = [0, 1].map((s) => v.games.filter((g) => g.winner === s).length);
    ending = h("h2.match-winner#end-reason", { dataset: { reason: "score" } }, `${says(names[v.winner], "wins")} the match, ${won[v.winner]} games to ${won[1 - v.winner]}`);
  } else if (finished && byScore && v.winner !== null) {
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
    settled,
    rematchNote,
    buttons,
  );
}

// The same match again, seats swapped: the first seat to ask makes it, the other joins
// it; each gets its seat token in the rematch when it first asks.  A player's seats
// stay the player's in the rematch: the player token opens it, no seat token is kept.
async function rematch(T) {
  const { S, id, entry, me } = T;
  const v = S.view;
  if (v.rematch && holds(savedMatch(v.rematch))) {
    location.hash = `#/play/${v.rematch}`;
    return;
  }
  S.rematching = true;
  T.render();
  if (!T.bySeat) {
    try {
      const { body } = await api.rematch(id, me.token);
      saveMatch(body.id, { player: me.id, mode: entry.mode || (online(T, v) ? "online" : "computer"), rematchOf: id, created: new Date().toISOString(), resultSeen: 0 });
      location.hash = `#/play/${body.id}`;
    } catch (err) {
      toast(problemText(err), "error");
      S.rematching = false;
      T.render();
    }
    return;
  }
  try {
    const tokens = {};
    let next = null;
    for (const seat of T.mySeats) {
      const { body } = await api.rematch(id, token(T, seat));
      next = body.id;
      if (body.token) tokens[body.seat] = body.token;
    }
    const known = savedMatch(next);
    if (!Object.keys(tokens).length && !seatsOf(known).length) {
      throw new Error("This browser asked for the rematch before, but no longer holds its seat token.");
    }
    saveMatch(next, {
      tokens: { ...(known?.tokens || {}), ...tokens },
      mode: entry.mode || (T.hotseat ? "hotseat" : "computer"),
      rematchOf: id,
      created: new Date().toISOString(),
      resultSeen: 0,
    });
    location.hash = `#/play/${next}`;
  } catch (err) {
    toast(problemText(err), "error");
    S.rematching = false;
    T.render();
  }
}

function dismissResult(T, n) {
  T.S.resultSeen = n;
  saveMatch(T.id, { resultSeen: n });
  if (T.hotseat) T.S.shown = null;
  T.render();
}

async function exportRecord(T) {
  try {
    const record = await api.exportRecord(T.id, token(T, viewSeat(T)));
    downloadText(`gin-rummy-${T.id}.json`, record);
  } catch (err) {
    toast(problemText(err), "error");
  }
}
