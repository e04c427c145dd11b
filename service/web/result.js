// A finished hand: both arrangements (melds, layoffs, deadwood) and the points; and a
// match's settlement under match bonuses (each game's points, boxes, game bonus, shutout).
// `hand` is a view's last_hand ({result, winner, points, doubled, knock, defense, hands});
// a Big Gin's knock says `big_gin` (all eleven laid down, its card the one drawn last).

import { bestMelds, cardElement } from "./cards.js";
import { h, says } from "./ui.js";

function cardsRow(cards, cls = "") {
  return h(`div.row${cls}`, {}, cards.map((c) => cardElement(c, { small: true })));
}

function meldsBlock(melds, layoffs = [], label = "") {
  return h(
    "div.laid",
    {},
    melds.map((meld, i) => {
      const added = layoffs.filter((x) => x.meld === i).map((x) => x.card);
      const row = h(`div.row.meld.m${i}`, { "aria-label": `${label}meld ${i + 1}` }, meld.map((c) => cardElement(c, { small: true })));
      for (const c of added) {
        const el = cardElement(c, { small: true });
        el.classList.add("laidoff");
        el.title = "laid off";
        row.append(el);
      }
      return row;
    }),
  );
}

function side(title, melds, layoffsOnto, deadwoodCards, deadwood, note) {
  return h(
    "section.side",
    {},
    h("h3", {}, title),
    melds.length ? meldsBlock(melds, layoffsOnto) : h("p.hint", {}, "No melds"),
    note || null,
    h("div.dw", {}, h("span", {}, "Deadwood "), deadwoodCards.length ? cardsRow(deadwoodCards, ".deadwood") : h("span", {}, "none"), h("b.count", {}, ` = ${deadwood}`)),
  );
}

export const isBigGin = (knock) => Boolean(knock && knock.big_gin);

export function describeResult(hand, names, rules) {
  const { result, winner, points, knock, defense } = hand;
  if (result === "dead") return { title: "Dead hand", line: "The stock ran down: nobody scores." };
  const k = knock.deadwood;
  const d = defense.deadwood;
  const knocker = names[knock.seat];
  // Oklahoma's spade upcard doubles the points (the hand says so).
  const sum = (text) => (hand.doubled ? `(${text}) × 2, a spade upcard` : text);
  if (result === "gin" && isBigGin(knock)) {
    const bonus = rules.big_gin_bonus;
    return { title: `${says(knocker, "goes")} Big Gin!`, line: `${says(knocker, "scores")} ${points}: ${sum(`${d} deadwood + ${bonus} Big Gin bonus`)}.` };
  }
  if (result === "gin") return { title: `${says(knocker, "goes")} Gin!`, line: `${says(knocker, "scores")} ${points}: ${sum(`${d} deadwood + ${rules.gin_bonus} Gin bonus`)}.` };
  if (result === "undercut")
    return { title: `Undercut! ${says(names[winner], "wins")} the hand`, line: `${says(names[winner], "scores")} ${points}: ${sum(`${k} − ${d} + ${rules.undercut_bonus} undercut bonus`)}.` };
  return { title: `${says(knocker, "knocks")} and ${knocker === "You" ? "win" : "wins"}`, line: `${says(knocker, "scores")} ${points}: ${sum(`${d} − ${k}`)}.` };
}

// A match ended on the scores under match bonuses: for each game (Hollywood's three, else
// the match as one) each player's points, boxes (hands won × box_bonus), the game bonus,
// the shutout doubling and the total; then the totals over the games.
export function settlementElement(settlement, names, rules) {
  const many = settlement.games.length > 1;
  const cell = (x) => h("td.num", {}, x);
  const rows = [];
  settlement.games.forEach((g, i) => {
    const label = many ? `Game ${i + 1}` : "The game";
    const won = g.winner !== null && g.winner !== undefined ? ` · ${says(names[g.winner], "wins")}${g.shutout ? " (a shutout)" : ""}` : "";
    rows.push(h("tr.game-head", { dataset: { game: i + 1 } }, h("th", { colspan: "3", scope: "rowgroup" }, label, h("span.hint", {}, won))));
    rows.push(h("tr", {}, h("th", { scope: "row" }, "Points"), [0, 1].map((s) => cell(String(g.scores[s])))));
    if (rules.box_bonus)
      rows.push(h("tr", {}, h("th", { scope: "row" }, `Boxes (${rules.box_bonus} a hand won)`), [0, 1].map((s) => cell(`${g.hands[s] * rules.box_bonus} (${g.hands[s]})`))));
    if (rules.game_bonus) rows.push(h("tr", {}, h("th", { scope: "row" }, "Game bonus"), [0, 1].map((s) => cell(g.winner === s ? String(rules.game_bonus) : "—"))));
    if (g.shutout) rows.push(h("tr.shutout", {}, h("th", { scope: "row" }, "Shutout"), [0, 1].map((s) => cell(g.winner === s ? "× 2" : "—"))));
    rows.push(h("tr.game-total", {}, h("th", { scope: "row" }, many ? `Game ${i + 1} total` : "Total"), [0, 1].map((s) => h("td.num", {}, h("b", {}, String(g.totals[s]))))));
  });
  if (many) rows.push(h("tr.match-total", {}, h("th", { scope: "row" }, "Match total"), [0, 1].map((s) => h("td.num", {}, h("b", {}, String(settlement.totals[s]))))));
  return h(
    "section.settlement#settlement",
    { "aria-label": "Settlement" },
    h("h3", {}, "Settlement"),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, ""), names.map((n) => h("th.num", { scope: "col" }, n)))), h("tbody", {}, rows)),
    h("p.settlement-totals#settlement-totals", {}, "Totals: ", names.map((n, s) => `${n} ${settlement.totals[s]}`).join(" · ")),
  );
}

export function resultElement(hand, names, rules) {
  const { title, line } = describeResult(hand, names, rules);
  const parts = [];
  if (hand.knock) {
    const k = hand.knock;
    const dseat = 1 - k.seat;
    parts.push(
      side(`${names[k.seat]} ${isBigGin(k) ? "went Big Gin" : k.gin ? "went Gin" : "knocked"}`, k.melds, hand.defense ? hand.defense.layoffs : [], k.deadwood_cards, k.deadwood),
    );
    if (hand.defense) {
      const dfn = hand.defense;
      const laid = dfn.layoffs.length
        ? h("p.layoffs", {}, `Laid off: `, ...dfn.layoffs.flatMap((x) => [cardElement(x.card, { small: true }), ` on meld ${x.meld + 1}  `]))
        : null;
      parts.push(side(`${names[dseat]} defended`, dfn.melds, [], dfn.deadwood_cards, dfn.deadwood, laid));
    }
  } else {
    hand.hands.forEach((cards, seat) => {
      const best = bestMelds(cards);
      parts.push(side(names[seat], best.melds, [], best.deadwood_cards, best.deadwood));
    });
  }
  return h(
    "div.result",
    { dataset: { result: hand.result } },
    h("h2.result-title", {}, title),
    h("div.sides", {}, parts),
    h("p.points", {}, line),
  );
}
