// The bars above the table: the score (the players, who is to act, whether the other
// player follows the match, the rules and the hand; under Hollywood scoring its three
// games), and the match bar (the clock of the seat to act, a timeout claim, resign with
// a confirm step).  `T` is the table
// context (table.js).

import { serverNow } from "./api.js";
import { act, online, quietRefresh } from "./table-live.js";
import { clockText, h, matchLength, remainingText, says } from "./ui.js";

// `between`: a hand's result is on screen while the next hand is already dealt: the
// bar is about the hand shown (its number, no one to act) until the next is shown.
export function scoreBar(T, v, between) {
  const turn = between ? null : v.turn;
  const hand = between ? `after hand ${v.last_hand.hand}` : `hand ${v.hand_number}`;
  const opp = 1 - v.seat;
  // Whether the other player follows the match now (a live stream open): only for a
  // person on another device (null for the computer; both seats are here in hotseat),
  // while the match is played (a finished match's view does not say).
  const connected = v.opponent.connected;
  const presence =
    online(T, v) && v.status === "active" && connected !== null
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
        // Hollywood: the score is each game's (below), not one running total.
        v.games ? null : h("span.score", {}, v.scores[i]),
        i === opp ? presence : null,
      ),
    ),
    h("span.meta#score-meta", {}, `${v.rules.preset} · ${matchLength(v.rules)}${v.rules.turn_seconds ? ` · ${clockText(v.rules.turn_seconds)}` : ""} · ${hand}`),
    v.games ? gamesElement(v) : null,
  );
}

// Hollywood's three games: each seat's score in each, the winner's marked once decided.
export function gamesElement(v) {
  const names = v.seats.map((s) => s.name);
  return h(
    "div.hw-games#games",
    { role: "group", "aria-label": "The three games" },
    v.games.map((g, i) => {
      const decided = g.winner !== null && g.winner !== undefined;
      const said = `Game ${i + 1}: ${names[0]} ${g.scores[0]}, ${names[1]} ${g.scores[1]}${decided ? `, won by ${names[g.winner]}` : ""}`;
      return h(
        `div.hw-game${decided ? ".decided" : ""}`,
        { dataset: { game: i + 1, winner: decided ? g.winner : "" }, title: said, "aria-label": said },
        h("span.hw-label", {}, `Game ${i + 1}`),
        h(
          "span.hw-scores",
          { "aria-hidden": "true" },
          [0, 1].map((seat) =>
            h(`span.hw-score${g.winner === seat ? ".won" : ""}`, { dataset: { seat } }, g.winner === seat ? h("span.mark", {}, "✓") : null, String(g.scores[seat])),
          ).flatMap((el, seat) => (seat ? [h("span.sep", {}, "–"), el] : [el])),
        ),
      );
    }),
  );
}

// The clock of the seat to act, a timeout claim, and resign (with a confirm step).
export function matchBar(T, v, names, handShown) {
  const { S, hotseat } = T;
  const items = [];
  if (v.status === "active" && v.deadline) items.push(clockElement(T, v, names));
  const resign = v.legal_actions.find((a) => a.type === "resign");
  // Two people on one device: only the player holding the device (the hand shown) may resign.
  const canResign = resign && (!hotseat || handShown);
  if (canResign && !S.confirmResign) {
    items.push(
      h(
        "button.resign#resign",
        { type: "button", disabled: S.busy, onclick: () => askResign(T) },
        hotseat ? `Resign for ${names[v.seat]}…` : "Resign…",
      ),
    );
  }
  if (canResign && S.confirmResign) {
    items.push(
      h(
        "div.confirm#resign-confirm",
        { role: "alertdialog", "aria-label": "Resign the match?", onkeydown: (e) => e.key === "Escape" && cancelResign(T) },
        h("span", {}, `${hotseat ? `${names[v.seat]}, resign` : "Resign"} the match? ${says(names[1 - v.seat], "wins")} it.`),
        h("button.danger#confirm-resign", { type: "button", disabled: S.busy, onclick: () => ((S.confirmResign = false), act(T, resign, { retry: true })) }, "Resign"),
        h("button#cancel-resign", { type: "button", onclick: () => cancelResign(T) }, "Keep playing"),
      ),
    );
  }
  return items.length ? h("div.matchbar#matchbar", {}, items) : null;
}

function askResign(T) {
  T.S.confirmResign = true;
  T.render();
  T.el.querySelector("#cancel-resign")?.focus();
}

function cancelResign(T) {
  T.S.confirmResign = false;
  T.render();
}

function clockElement(T, v, names) {
  const left = Date.parse(v.deadline) - serverNow();
  const mine = v.turn === v.seat && !T.hotseat;
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
    claim ? h("button.primary#claim", { type: "button", disabled: T.S.busy, onclick: () => act(T, claim, { retry: true }) }, "Claim the match") : null,
  );
}

// Every second: the countdown, without drawing the table again, until it reaches zero.
export function tick(T) {
  const { S, el } = T;
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
    T.render();
    clearTimeout(T.timers.claimTimer);
    T.timers.claimTimer = setTimeout(() => claimCheck(T), 400);
  }
}

// The other seat's time is up: the service lists the claim once it judges so (its own
// clock); ask a few times, a couple of seconds apart.
async function claimCheck(T) {
  const { S } = T;
  const v = S.view;
  if (!v || v.status !== "active" || !v.deadline || T.hotseat || v.turn === v.seat) return;
  if (Date.parse(v.deadline) > serverNow() || v.legal_actions.some((a) => a.type === "claim_timeout")) return;
  if (S.claimTries++ >= 6) return;
  await quietRefresh(T);
  T.timers.claimTimer = setTimeout(() => claimCheck(T), 2000);
}
