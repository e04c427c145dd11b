// Two people on one device: between turns the hand is covered, with what happened since
// (the log), until the next player reveals theirs.  `T` is the table context (table.js).

import { load } from "./table-live.js";
import { h, problemText, toast } from "./ui.js";

export function cover(T, v, names) {
  const { S } = T;
  const next = v.turn;
  return h(
    "section.panel.cover#cover",
    { dataset: { next } },
    h("h2", {}, `Pass the device to ${names[next]}`),
    h("p", {}, `${names[1 - next]}'s cards are hidden. ${names[next]}, reveal your hand when the other player is not looking.`),
    S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null,
    h("button.primary#reveal", { type: "button", onclick: () => reveal(T, next) }, `Reveal ${names[next]}'s hand`),
  );
}

async function reveal(T, seat) {
  const { S } = T;
  S.shown = seat;
  S.previousHand = null;
  S.drawn = null;
  try {
    await load(T, seat);
  } catch (err) {
    toast(problemText(err), "error");
  }
  T.render();
}
