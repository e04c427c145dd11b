// The coach: a hint for the seat to act, when the match's rules allow hints.  The hint
// (or its refusal) belongs to the position it was asked at.  `T` is the table context
// (table.js).

import { ApiError, api } from "./api.js";
import { playText } from "./cards.js";
import { act, online, refresh, token } from "./table-live.js";
import { h, problemText } from "./ui.js";

const HINT_PHASES = new Set(["upcard_offer", "draw", "discard"]);

// The hint (or its refusal) asked for at the position on screen: any play, or any
// other event, makes it stale, and it is no longer shown.
export const coachHere = (T, v) => (T.S.coach && T.S.coach.seat === v.seat && T.S.coach.version === v.version ? T.S.coach : null);
const samePlay = (a, b) => a.type === b.type && (a.source ?? null) === (b.source ?? null) && (a.card ?? null) === (b.card ?? null);
export function isHinted(T, v, action) {
  const here = coachHere(T, v);
  return Boolean(here && here.action && action && samePlay(here.action, action));
}

export function coachPart(T, v) {
  const { S } = T;
  if (v.rules.hints !== true || v.turn !== v.seat || !HINT_PHASES.has(v.phase)) return null;
  const here = coachHere(T, v);
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
      { type: "button", disabled: S.busy || S.asking || Boolean(here), onclick: () => askHint(T), "aria-label": "Hint: the coach's play for this turn", title: "The coach's play for this turn (H)" },
      S.asking ? "Thinking…" : "Hint",
    ),
    here && here.action ? h("button#play-hint", { type: "button", disabled: S.busy, onclick: () => act(T, here.action), "aria-label": `Play the hint: ${playText(here.action, top)}` }, "Play it") : null,
    // Only a match between two players is rated: the note matters there only.
    online(T, v) && !here ? h("span.hint#hint-note", {}, "A match with a hint is not rated.") : null,
    said,
  );
}

async function askHint(T) {
  const { S } = T;
  const v = S.view;
  if (!v || S.busy || S.asking) return;
  const seat = v.seat;
  S.asking = true;
  T.render();
  let stale = false;
  try {
    const hint = await api.hint(T.id, token(T, seat));
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
  if (stale) await refresh(T);
  else T.render();
}
