// A finished hand: both arrangements (melds, layoffs, deadwood) and the points.
// `hand` is a view's last_hand ({result, winner, points, knock, defense, hands}).

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

export function describeResult(hand, names, rules) {
  const { result, winner, points, knock, defense } = hand;
  if (result === "dead") return { title: "Dead hand", line: "The stock ran down: nobody scores." };
  const k = knock.deadwood;
  const d = defense.deadwood;
  const knocker = names[knock.seat];
  if (result === "gin") return { title: `${says(knocker, "goes")} Gin!`, line: `${says(knocker, "scores")} ${points}: ${d} deadwood + ${rules.gin_bonus} Gin bonus.` };
  if (result === "undercut")
    return { title: `Undercut! ${says(names[winner], "wins")} the hand`, line: `${says(names[winner], "scores")} ${points}: ${k} − ${d} + ${rules.undercut_bonus} undercut bonus.` };
  return { title: `${says(knocker, "knocks")} and ${knocker === "You" ? "win" : "wins"}`, line: `${says(knocker, "scores")} ${points}: ${d} − ${k}.` };
}

export function resultElement(hand, names, rules) {
  const { title, line } = describeResult(hand, names, rules);
  const parts = [];
  if (hand.knock) {
    const k = hand.knock;
    const dseat = 1 - k.seat;
    parts.push(
      side(`${names[k.seat]} ${k.gin ? "went Gin" : "knocked"}`, k.melds, hand.defense ? hand.defense.layoffs : [], k.deadwood_cards, k.deadwood),
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
