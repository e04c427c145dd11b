// The knocker's arrangement step: Knock pressed with a card chosen, when the melds leave
// a choice, lays the other ten cards out with the best melds made; the person may break
// and make melds, then knock with the melds shown, or let the service choose.  `T` is
// the table context (table.js).

import { arrangement, benchElement, breakMeld, looseCards, makeMeld, pick, sameMelds } from "./arrange.js";
import { bestMelds, cardsText, deadwoodOf, hasChoiceOfLeast, pretty } from "./cards.js";
import { act } from "./table-live.js";
import { h, handLimit, toast } from "./ui.js";

// A change to a step of melds (the knocker's or the defender's): what it says (why it
// cannot be done, or, as `kind` "info", what else it did) is shown, then the step again.
export const stepEdit = (T, step, fn, kind = "error") => (...args) => {
  const said = fn(...args);
  if (said) toast(said, kind);
  step.error = null;
  T.render();
};

// Knock pressed with a card chosen: straight to the service when the melds leave no
// choice, else the step, opened with the best melds made.
export function knockPressed(T, action) {
  const v = T.S.view;
  const kept = v.hand.filter((c) => c !== action.card);
  const best = bestMelds(kept);
  if (!v.rules.knocker_arranges && !hasChoiceOfLeast(kept)) {
    act(T, action);
    return;
  }
  T.S.arrange = { version: v.version, seat: v.seat, action, least: best.deadwood, suggested: best.melds, error: null, ...arrangement(kept, best.melds) };
  T.render();
  T.el.querySelector("#confirm-knock")?.focus();
}

export function arrangePanel(T, v) {
  const { S } = T;
  const A = S.arrange;
  const loose = looseCards(A);
  const deadwood = deadwoodOf(loose);
  const limit = handLimit(v); // this hand's (under Oklahoma, its upcard's)
  const free = v.rules.knocker_arranges;
  let verdict = null;
  if (deadwood > limit) verdict = `That is over the knock limit of ${limit}: make melds of more cards to knock.`;
  else if (!free && deadwood > A.least) verdict = `Under these rules you lay out an arrangement of your least deadwood, ${A.least}.`;
  const changed = (fn) => stepEdit(T, A, fn);
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
        { type: "button", disabled: Boolean(verdict) || S.busy, onclick: () => knockWith(T, A) },
        deadwood === 0 ? "Go Gin" : verdict ? "Knock" : `Knock with ${deadwood}`,
      ),
      h("button#arrange-auto", { type: "button", disabled: S.busy, title: "The service, which knows both hands, lays out the arrangement of your least deadwood that leaves the other player the most deadwood", onclick: () => act(T, A.action) }, "Let the service choose"),
      h("button#arrange-best", { type: "button", disabled: sameMelds(A.melds, A.suggested), onclick: changed(() => void Object.assign(A, arrangement(A.cards, A.suggested))) }, "Best melds"),
      h("button#arrange-cancel", { type: "button", onclick: () => ((S.arrange = null), T.render()) }, "Back"),
    ),
  );
}

// The knock carries the melds shown (all ten melded is Gin, whatever the button said).
function knockWith(T, A) {
  const action = { type: "knock", card: A.action.card, melds: A.melds.map((m) => [...m]) };
  act(T, action, { refused: (text) => T.S.arrange === A && (A.error = text) });
}
