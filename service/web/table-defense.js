// The defense step: the knocker's melds, the defender's own melds and layoffs, opened
// with the suggested best defense.  `T` is the table context (table.js).

import { arrangement, benchElement, breakMeld, looseCards, makeMeld, pick, sameMelds } from "./arrange.js";
import { cardElement, cardName, cardsText, deadwoodOf, meldKind, pretty } from "./cards.js";
import { stepEdit } from "./table-arrange.js";
import { act } from "./table-live.js";
import { h, says, tapWord } from "./ui.js";

// The defender's own melds and layoffs, opened with the suggested best defense; the
// person may break and make melds and lay loose cards off onto the knocker's melds
// (each knocker's meld with what is laid off onto it must stay one legal meld; the
// service puts the layoffs in the order they can be made, chains included).
function defenseChoice(T, v) {
  const { S } = T;
  const suggestion = v.legal_actions.find((a) => a.type === "defend");
  if (!S.defend) {
    S.defend = { version: v.version, seat: v.seat, suggestion, error: null, ...arrangement(v.hand, suggestion.melds), layoffs: suggestion.layoffs.map((x) => ({ ...x })) };
  }
  return S.defend;
}

function layOff(D, knock, meld) {
  const onto = [...knock.melds[meld], ...D.layoffs.filter((x) => x.meld === meld).map((x) => x.card)];
  if (!D.picked.length) return "Pick a loose card of yours first, then the meld to lay it off onto.";
  if (!meldKind([...onto, ...D.picked])) {
    return `${cardsText(D.picked)} cannot be laid off onto ${cardsText(onto)}: a run grows only at its ends, a set only to four cards.`;
  }
  D.layoffs.push(...D.picked.map((card) => ({ card, meld })));
  D.picked = [];
  return null;
}

// A card laid off comes back; so do the cards of the same meld that were laid off
// beyond it (9♠ after 8♠ onto 5-6-7♠), and only those (4♠ stays).
function takeBack(D, knock, card) {
  const x = D.layoffs.find((y) => y.card === card);
  let rest = D.layoffs.filter((y) => y.meld === x.meld && y !== x).map((y) => y.card);
  D.layoffs = D.layoffs.filter((y) => y.meld !== x.meld);
  const onto = [...knock.melds[x.meld]];
  for (let joined = true; joined; ) {
    const next = rest.find((c) => meldKind([...onto, c]));
    joined = Boolean(next);
    if (joined) {
      onto.push(next);
      D.layoffs.push({ card: next, meld: x.meld });
      rest = rest.filter((c) => c !== next);
    }
  }
  return rest.length ? `${cardsText(rest)} came back too: laid off beyond ${pretty(card)}.` : null;
}

export function defensePanel(T, v, names) {
  const { S } = T;
  const knock = v.knock;
  const D = defenseChoice(T, v);
  const laidOff = D.layoffs.map((x) => x.card);
  const left = looseCards(D, laidOff);
  const mine = deadwoodOf(left);
  const outcome =
    mine <= knock.deadwood
      ? `Undercut: you score ${knock.deadwood - mine} + ${v.rules.undercut_bonus}.`
      : `${says(names[knock.seat], "scores")} ${mine - knock.deadwood}.`;
  const doubledNote = v.doubled ? " The hand's points are doubled (a spade upcard)." : "";
  const changed = (fn, kind) => stepEdit(T, D, fn, kind);
  const layoffsKey = (layoffs) => layoffs.map((x) => `${x.card}>${x.meld}`).sort().join(" ");
  const asSuggested = sameMelds(D.melds, D.suggestion.melds) && layoffsKey(D.layoffs) === layoffsKey(D.suggestion.layoffs);
  return h(
    "section.panel.defense#defense",
    { "aria-label": "Defense" },
    h("h2", {}, `${says(names[knock.seat], "knocks")} with ${knock.deadwood}${knock.card ? ` (discarded ${pretty(knock.card)})` : ""}`),
    h("p", {}, `${names[knock.seat]}'s melds${D.layoffs.length ? ", with your layoffs" : ""}: pick loose cards of yours, then Lay off here (${tapWord()} a card laid off to take it back).`),
    knockerMelds(T, D, knock, changed),
    h("h3", {}, "Your melds"),
    benchElement(D, { aside: laidOff, onPick: changed((c) => pick(D, c)), onMake: changed(() => makeMeld(D)), onBreak: changed((i) => breakMeld(D, i)), label: "Your cards", layOff: true }),
    h(
      "p.defense-count",
      {},
      "Your deadwood after the layoffs: ",
      h("b#defense-deadwood", {}, String(mine)),
      left.length ? ` (${cardsText(left)})` : "",
      ". ",
      outcome + doubledNote,
      asSuggested ? h("span.hint", {}, " This is the suggested best defense.") : null,
    ),
    D.error ? h("p.error#defense-error", { role: "alert" }, `Refused: ${D.error}`) : null,
    h(
      "div.actions",
      {},
      h("button.primary#confirm-defense", { type: "button", disabled: S.busy, onclick: () => defendWith(T, D) }, "Confirm defense"),
      h("button#defense-suggestion", { type: "button", disabled: asSuggested || S.busy, onclick: () => ((S.defend = null), T.render()) }, "Use the suggestion"),
    ),
  );
}

// The knocker's melds, each a row that takes the cards picked, with the cards laid off
// onto it (a click takes one back).
function knockerMelds(T, D, knock, changed) {
  return h(
    "div.laid",
    {},
    knock.melds.map((meld, i) => {
      const onto = D.layoffs.filter((y) => y.meld === i).map((y) => y.card);
      const fits = D.picked.length > 0 && Boolean(meldKind([...meld, ...onto, ...D.picked]));
      const row = h(
        `div.row.meld.target.m${i % 4}${fits ? ".fits" : ""}`,
        // The whole row takes the cards picked (its button says so, for the keyboard).
        { dataset: { meld: i }, onclick: (e) => !e.target.closest("button") && D.picked.length && changed(() => layOff(D, knock, i))() },
        h("span.n", {}, `${i + 1}`),
        meld.map((c) => cardElement(c, { small: true })),
        onto.map((c) => {
          const b = cardElement(c, { button: true, small: true });
          b.classList.add("laidoff");
          b.title = `Laid off: ${tapWord()} to take it back`;
          b.setAttribute("aria-label", `${cardName(c)}, laid off onto meld ${i + 1}: take it back`);
          b.addEventListener("click", changed(() => takeBack(D, knock, c), "info"));
          return b;
        }),
        h(
          "button.lay-here",
          { type: "button", id: `lay-off-${i}`, disabled: !fits || T.S.busy, onclick: changed(() => layOff(D, knock, i)), "aria-label": `Lay off the cards picked onto meld ${i + 1}` },
          D.picked.length ? `Lay off ${cardsText(D.picked)} here` : "Lay off here",
        ),
      );
      return row;
    }),
  );
}

// The defense sent whole, melds and layoffs: what is shown is what is played.  (A
// defend with layoffs alone would keep the best melds of the rest.)
function defendWith(T, D) {
  const action = { type: "defend", melds: D.melds.map((m) => [...m]), layoffs: D.layoffs.map((x) => ({ card: x.card, meld: x.meld })) };
  act(T, action, { refused: (text) => T.S.defend === D && (D.error = text) });
}
