// The hand panel: the cards in melds (the one just drawn, the one that cannot go back,
// the hint, the cards that knock or go Gin marked), the deadwood live, the sort, and
// Discard, Knock and Gin.  A card is selected by a click (a tap), discarded by a second one.
// `T` is the table context (table.js).

import { bestMelds, cardElement, cardName, handElement, pretty } from "./cards.js";
import { setPref } from "./saved.js";
import { knockPressed } from "./table-arrange.js";
import { coachHere } from "./table-coach.js";
import { handKeys, keysHelp } from "./table-keys.js";
import { act } from "./table-live.js";
import { h, handLimit, tapWord, toast } from "./ui.js";

export function handPanel(T, v, names, find) {
  const { S } = T;
  const discarding = v.phase === "discard" && v.turn === v.seat;
  const enders = new Map(v.legal_actions.filter((a) => (a.type === "knock" || a.type === "gin") && a.card).map((a) => [a.card, a]));
  const sel = S.selected;
  const coach = coachHere(T, v);
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
    c.addEventListener("click", () => cardClicked(T, card));
    return c;
  };
  const handEl = handElement(v.hand, v.melds, S.sort, makeCard);
  handEl.id = "hand";
  handEl.setAttribute("role", "group");
  handEl.setAttribute("aria-label", `${names[v.seat]}'s hand`);
  handEl.dataset.seat = v.seat;
  handEl.addEventListener("keydown", (event) => handKeys(T, event));
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
  // Big Gin: all eleven cards laid down, none discarded (no card to choose).
  const bigGinA = discarding ? v.legal_actions.find((a) => a.type === "big_gin") : null;
  // Gin only (Straight Gin, an Oklahoma ace): no knock is ever listed, no Knock offered.
  const ginOnly = handLimit(v) === 0;
  const knockable = [...enders.keys()];
  const sortButton = (mode, label) =>
    h(`button.sort${S.sort === mode ? ".on" : ""}`, { type: "button", "aria-pressed": String(S.sort === mode), onclick: () => setSort(T, mode) }, label);
  const controls = h(
    "div.controls",
    {},
    h("div.sorts", { role: "group", "aria-label": "Sort" }, "Sort: ", sortButton("melds", "Melds"), sortButton("rank", "Rank"), sortButton("suit", "Suit")),
    h(
      "div.acts",
      { hidden: !(v.turn === v.seat && (v.phase === "draw" || v.phase === "discard")) },
      h("button#discard", { type: "button", disabled: !discardA || S.busy, onclick: () => act(T, discardA) }, "Discard"),
      ginOnly ? null : h("button.knock#knock", { type: "button", disabled: !knockA || S.busy, onclick: () => knockPressed(T, knockA) }, "Knock"),
      h("button.gin#gin", { type: "button", disabled: !ginA || S.busy, onclick: () => act(T, ginA) }, "Gin"),
      bigGinA
        ? h("button.gin.big-gin#big-gin", { type: "button", disabled: S.busy, title: "Lay down all eleven cards, without discarding", onclick: () => act(T, bigGinA) }, "Big Gin")
        : null,
    ),
  );
  let hint = null;
  if (bigGinA) hint = h("p.hint#end-hint", {}, "All eleven of your cards meld: Big Gin lays them all down, without a discard.");
  else if (discarding && knockable.length && !knockA && !ginA)
    hint = h("p.hint#end-hint", {}, `You can ${enders.get(knockable[0]).type === "gin" ? "go Gin" : "knock"}: select ${knockable.map(pretty).join(" or ")} (marked K/G) to discard.`);
  return h("section.mine", { "aria-label": "Your hand" }, deadwood, handEl, controls, hint, keysHelp(v));
}

function setSort(T, mode) {
  T.S.sort = mode;
  setPref("sort", mode);
  T.render();
}

function cardClicked(T, card) {
  const { S } = T;
  const v = S.view;
  S.focus = card;
  if (!(v.phase === "discard" && v.turn === v.seat) || S.busy) {
    if (v.phase === "draw" && v.turn === v.seat) toast(`Draw first: ${tapWord()} the stock or the discard pile.`);
    return;
  }
  if (card === v.no_return) {
    toast(`${pretty(card)} was taken from the pile this turn: it cannot be discarded now.`);
    return;
  }
  if (S.selected === card) {
    const a = v.legal_actions.find((x) => x.type === "discard" && x.card === card);
    if (a) act(T, a);
    return;
  }
  S.selected = card;
  T.render();
}
