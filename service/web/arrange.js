// Laying out melds by hand: the knocker's arrangement step and the defender's own melds.
// An arrangement is a few cards, the melds made of them so far, and the loose cards
// picked to make the next one; everything not in a meld (nor laid off) is deadwood.
// Nothing here is the rules' last word: the service checks what is sent, and a refusal
// is shown with its reason.

import { byRank, cardElement, cardsText, deadwoodOf, meldKind, orderMeld, pretty } from "./cards.js";
import { h } from "./ui.js";

export const arrangement = (cards, melds) => ({ cards: [...cards], melds: melds.map(orderMeld), picked: [] });

// The cards in no meld, less those set aside elsewhere (laid off), by rank.
export function looseCards(arr, aside = []) {
  const used = new Set([...arr.melds.flat(), ...aside]);
  return arr.cards.filter((c) => !used.has(c)).sort(byRank);
}

export const sameMelds = (a, b) => {
  const key = (melds) => melds.map((m) => [...m].sort().join(" ")).sort().join("|");
  return key(a) === key(b);
};

export function pick(arr, card) {
  arr.picked = arr.picked.includes(card) ? arr.picked.filter((c) => c !== card) : [...arr.picked, card];
}

// The cards picked become a meld, if they are one; else why not.
export function makeMeld(arr) {
  if (!meldKind(arr.picked)) return `${cardsText(arr.picked)} is not a meld: a set is 3 or 4 cards of one rank, a run 3 or more in a row in one suit (the ace is low only).`;
  arr.melds.push(orderMeld(arr.picked));
  arr.picked = [];
  return null;
}

export function breakMeld(arr, i) {
  arr.melds.splice(i, 1);
  arr.picked = [];
}

// The melds as a row of groups (a coloured bar under each, a Break button), then the
// loose cards to pick from, Make meld, and what the cards picked make (`layOff`: they
// may also be laid off, which is said when too few make a meld).
export function benchElement(arr, { aside = [], onPick, onMake, onBreak, label = "Your cards", layOff = false }) {
  const loose = looseCards(arr, aside);
  const melds = arr.melds.map((meld, i) =>
    h(
      "div.bench-meld",
      { dataset: { meld: i } },
      h(`div.group.meld.m${i % 4}`, { role: "group", "aria-label": `Meld ${i + 1}: ${meld.map(pretty).join(" ")}` }, meld.map((c) => cardElement(c))),
      h("button.break", { type: "button", id: `break-${i}`, onclick: () => onBreak(i), "aria-label": `Break meld ${i + 1} (${meld.map(pretty).join(" ")}) back into loose cards` }, "Break"),
    ),
  );
  const cards = loose.map((c) => {
    const b = cardElement(c, { button: true });
    const on = arr.picked.includes(c);
    b.classList.toggle("picked", on);
    b.setAttribute("aria-pressed", String(on));
    b.addEventListener("click", () => onPick(c));
    return b;
  });
  const kind = meldKind(arr.picked);
  let said;
  if (!arr.picked.length) said = loose.length ? "Pick loose cards to make a meld." : "Every card is in a meld.";
  else if (kind) said = `${cardsText(arr.picked)}: a ${kind}.`;
  else if (arr.picked.length >= 3) said = `${cardsText(arr.picked)}: not a meld.`;
  else said = `${cardsText(arr.picked)}: ${layOff ? "lay off onto a meld above, or pick" : "pick"} at least 3 cards to make a meld.`;
  return h(
    "div.bench",
    { role: "group", "aria-label": label },
    h(
      "div.bench-row",
      {},
      melds,
      h("div.bench-loose", {}, h("div.group.loose", { role: "group", "aria-label": `Loose cards, ${deadwoodOf(loose)} deadwood` }, cards.length ? cards : h("span.none", {}, "none"))),
    ),
    h(
      "div.bench-tools",
      {},
      h("button#make-meld", { type: "button", disabled: !kind, onclick: onMake }, "Make meld"),
      h("span.picked-note#picked-note", { role: "status" }, said),
    ),
  );
}
