// The table while a hand is played: the opponent (card backs, the cards known to be in
// that hand), the stock and the discard pile, the status line, the coach, the log, and
// the hand (or the step of melds that holds its cards).  `T` is the table context
// (table.js).

import { cardBack, cardElement, cardName, pretty } from "./cards.js";
import { arrangePanel } from "./table-arrange.js";
import { coachPart, isHinted } from "./table-coach.js";
import { defensePanel } from "./table-defense.js";
import { handPanel } from "./table-hand.js";
import { act } from "./table-live.js";
import { h, handLimit, knockLimitText, seatLabel, tapWord } from "./ui.js";

// The actions that end the match instead of playing the cards.
const ENDINGS = new Set(["resign", "claim_timeout", "abort"]);

export function tableParts(T, v, names) {
  const { S } = T;
  const me = v.seat;
  const opp = 1 - me;
  const legal = v.legal_actions.filter((a) => !ENDINGS.has(a.type)); // the plays only
  const find = (type, extra = {}) => legal.find((a) => a.type === type && Object.entries(extra).every(([k, x]) => a[k] === x));
  const myTurn = v.turn === me;

  // Opponent: card backs, and the cards known to be in that hand.
  const oppEl = h(
    "section.opponent",
    { "aria-label": "Opponent" },
    h("div.who", {}, h("b", {}, seatLabel(v.seats[opp])), ` · ${v.opponent.card_count} cards`),
    h("div.backs", {}, Array.from({ length: v.opponent.card_count }, () => cardBack({ small: true }))),
    v.opponent.known_cards.length
      ? h("div.known", {}, "Took from the pile: ", v.opponent.known_cards.map((c) => cardElement(c, { small: true })))
      : null,
  );

  // Piles.
  const stockAction = find("draw", { source: "stock" });
  const pileAction = find("draw", { source: "discard" });
  const top = v.discard_pile[v.discard_pile.length - 1];
  const hinted = (a) => (isHinted(T, v, a) ? ".hinted" : "");
  const stock = h(
    `button.pile.stock${hinted(stockAction)}#stock`,
    { type: "button", disabled: !stockAction || S.busy, onclick: () => act(T, stockAction), "aria-label": `Stock, ${v.stock_count} cards${stockAction ? ": draw" : ""}${hinted(stockAction) ? " (the hint)" : ""}` },
    v.stock_count ? cardBack() : h("span.card.empty"),
    h("span.count", {}, `${v.stock_count}`),
    hinted(stockAction) ? h("span.hint-tag", { "aria-hidden": "true" }, "hint") : null,
  );
  const under = v.discard_pile[v.discard_pile.length - 2];
  const pile = h(
    `button.pile.discard${hinted(pileAction)}#pile`,
    { type: "button", disabled: !pileAction || S.busy, onclick: () => act(T, pileAction), "aria-label": top ? `Discard pile, ${cardName(top)} on top${pileAction ? ": take it" : ""}${hinted(pileAction) ? " (the hint)" : ""}` : "Discard pile, empty" },
    under ? h("span.under", {}, cardElement(under)) : null,
    top ? cardElement(top) : h("span.card.empty"),
    h("span.count", {}, `${v.discard_pile.length}`),
    hinted(pileAction) ? h("span.hint-tag", { "aria-hidden": "true" }, "hint") : null,
  );
  const passAction = find("pass");
  const piles = h(
    "section.piles",
    { "aria-label": "Piles" },
    h("div.pilebox", {}, stock, h("span.label", {}, "Stock", v.rules.dead_hand_stock ? ` · dead at ${v.rules.dead_hand_stock}` : "")),
    h("div.pilebox", {}, pile, h("span.label", {}, v.phase === "upcard_offer" ? "Upcard" : "Discard pile")),
    passAction ? h(`button${hinted(passAction)}#pass`, { type: "button", onclick: () => act(T, passAction), disabled: S.busy }, "Pass") : null,
  );

  const rulesLine = handRules(v);
  const arranging = Boolean(S.arrange) && v.phase === "discard" && myTurn;
  const status = h("p.status#status", { role: "status" }, arranging ? "Lay out your melds, then knock." : statusText(v, names, { stockAction, pileAction }));
  const coach = arranging ? null : coachPart(T, v);
  const log = S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null;
  const defense = v.phase === "defense" && myTurn ? defensePanel(T, v, names) : null;
  // Arranging or defending, the step holds the cards: the hand is not shown twice.
  const mine = arranging ? arrangePanel(T, v) : defense ? null : handPanel(T, v, names, find);
  return [oppEl, piles, rulesLine, status, coach, log, defense, mine].filter(Boolean);
}

// This hand's own rules, where they are not the usual: its knock limit (under Oklahoma
// the first upcard's; Straight Gin: Gin only), a doubled score, Big Gin.
export function handRules(v) {
  const limit = handLimit(v);
  const chips = [];
  if (limit !== 10 || v.rules.oklahoma) {
    const why = v.rules.oklahoma ? (limit === 0 ? "Oklahoma: the upcard is an ace" : "Oklahoma: set by the upcard") : "Straight Gin";
    chips.push(h("span.rule-chip.limit#knock-limit", { dataset: { limit }, title: why }, knockLimitText(limit)));
  }
  if (v.doubled) chips.push(h("span.rule-chip.doubled#doubled", { title: "Oklahoma: a spade upcard doubles the hand's points" }, "Spades double"));
  if (v.rules.big_gin_bonus != null) chips.push(h("span.rule-chip#big-gin-rule", { title: "All eleven cards melded after the draw: laid down without a discard" }, `Big Gin +${v.rules.big_gin_bonus}`));
  return chips.length ? h("p.hand-rules#hand-rules", { "aria-label": "This hand's rules" }, chips) : null;
}

function statusText(v, names, { stockAction, pileAction }) {
  const me = v.seat;
  const top = v.discard_pile[v.discard_pile.length - 1];
  if (v.turn !== me) return v.turn === null ? "" : `Waiting for ${names[v.turn]}…`;
  if (v.phase === "upcard_offer") return `Take the upcard ${pretty(top)} (${tapWord()} the pile) or pass.`;
  if (v.phase === "draw") {
    if (!pileAction) return "Draw from the stock: the upcard was passed by both players.";
    return `Your turn: draw from the stock or take ${pretty(top)} from the discard pile.`;
  }
  if (v.phase === "discard") {
    if (v.no_return) return `You took ${pretty(v.no_return)} from the pile: it cannot go back this turn. Choose a card to discard.`;
    return `Choose a card to discard: ${tapWord()} it once to select, again to discard.`;
  }
  if (v.phase === "defense") return `${names[v.knock.seat]} knocked: choose your melds and layoffs, then confirm your defense.`;
  return "";
}
