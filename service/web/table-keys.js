// The keyboard at the table: the arrows move between the cards of the hand, and letters
// press the table's buttons (S stock, P pile, D discard, K knock, G Gin, B Big Gin, A pass,
// H hint).
// `T` is the table context (table.js).

import { h, touchOnly } from "./ui.js";

// The keys, under a "Keyboard" disclosure; none on a device without a fine pointer.
export function keysHelp(v) {
  if (touchOnly()) return null;
  return h(
    "details.keys",
    {},
    h("summary", {}, "Keyboard"),
    h(
      "p",
      {},
      `S draw from the stock · P take from the pile · ←/→ move between cards · Enter or Space select, then discard · D discard${(v.knock_limit ?? v.rules.knock_limit) === 0 ? "" : " · K knock"} · G Gin${v.rules.big_gin_bonus != null ? " · B Big Gin" : ""} · A pass the upcard${v.rules.hints === true ? " · H a hint" : ""}`,
    ),
  );
}

// Within the hand (a keydown on it).
export function handKeys(T, event) {
  const cards = [...T.el.querySelectorAll("#hand .card")];
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
    T.S.focus = next.dataset.card;
  }
}

// Anywhere on the page while the table is open (a keydown on the document).
export function tableKeys(T, event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !T.S.view || event.target.matches("input, select, textarea")) return;
  const key = event.key.toLowerCase();
  const click = (sel) => {
    const b = T.el.querySelector(sel);
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
  else if (key === "b") click("#big-gin");
  else if (key === "a") click("#pass");
  else if (key === "h") click("#hint");
}
