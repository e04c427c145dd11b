// Cards: codes as the API writes them ("TD" ten of diamonds), faces drawn with CSS and
// Unicode, the three orders of a hand, and the meld bars.

export const RANKS = "A23456789TJQK";
const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAME = { A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King" };
const SUIT_ORDER = "SHCD"; // alternate colours when sorted by suit

export const rankOf = (card) => RANKS.indexOf(card[0]);
export const valueOf = (card) => Math.min(rankOf(card) + 1, 10);
export const isRed = (card) => card[1] === "H" || card[1] === "D";
export const rankText = (card) => (card[0] === "T" ? "10" : card[0]);
export const pretty = (card) => rankText(card) + SUIT_SYMBOL[card[1]];
export const cardName = (card) => `${RANK_NAME[card[0]] || card[0]} of ${SUIT_NAME[card[1]]}`;
export const cardsText = (cards) => (cards.length ? cards.map(pretty).join(" ") : "—");

// A play (an action, or the coach's {type, source?, card?}) in words: "take 7♠ from the
// pile", "knock, discarding 9♦".  A draw names no card: `top` is the pile's top card.
export function playText(play, top = null) {
  if (play.type === "pass") return "pass the upcard";
  if (play.type === "draw" && play.source === "stock") return "draw from the stock";
  if (play.type === "draw") return top ? `take ${pretty(top)} from the pile` : "take the pile's top card";
  if (play.type === "knock") return `knock, discarding ${pretty(play.card)}`;
  if (play.type === "gin") return `go Gin, discarding ${pretty(play.card)}`;
  if (play.type === "big_gin") return "lay down all eleven cards: Big Gin";
  return `discard ${pretty(play.card)}`;
}

export const byRank = (a, b) => rankOf(a) - rankOf(b) || SUIT_ORDER.indexOf(a[1]) - SUIT_ORDER.indexOf(b[1]);
const bySuit = (a, b) => SUIT_ORDER.indexOf(a[1]) - SUIT_ORDER.indexOf(b[1]) || rankOf(a) - rankOf(b);

// A card face (a button when it can be played, a span otherwise).
export function cardElement(card, { button = false, small = false } = {}) {
  const el = document.createElement(button ? "button" : "span");
  el.className = `card face${isRed(card) ? " red" : ""}${small ? " small" : ""}`;
  el.dataset.card = card;
  el.setAttribute("aria-label", cardName(card));
  if (button) el.type = "button";
  else el.setAttribute("role", "img");
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.innerHTML = `<b>${rankText(card)}</b><i>${SUIT_SYMBOL[card[1]]}</i>`;
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = SUIT_SYMBOL[card[1]];
  el.append(corner, pip);
  return el;
}

export function cardBack({ small = false, label = "" } = {}) {
  const el = document.createElement("span");
  el.className = `card back${small ? " small" : ""}`;
  if (label) el.setAttribute("aria-label", label);
  return el;
}

// The hand in groups to lay out: melds first (each with its bar colour), then the
// deadwood; or every card by rank or by suit, each still marked with its meld colour.
export function groupHand(hand, melds, mode) {
  const meldOf = new Map();
  melds.forEach((meld, i) => meld.forEach((c) => meldOf.set(c, i)));
  if (mode === "melds") {
    const groups = melds.map((meld, i) => ({ meld: i, cards: [...meld].sort(byRank) }));
    const loose = hand.filter((c) => !meldOf.has(c)).sort(byRank);
    if (loose.length) groups.push({ meld: null, cards: loose });
    return { groups, meldOf };
  }
  const sorted = [...hand].sort(mode === "suit" ? bySuit : byRank);
  return { groups: [{ meld: null, cards: sorted, mixed: true }], meldOf };
}

// A laid-out hand: groups of cards, a coloured bar under each meld.
export function handElement(hand, melds, mode, makeCard = (c) => cardElement(c)) {
  const { groups, meldOf } = groupHand(hand, melds, mode);
  const el = document.createElement("div");
  el.className = "hand";
  for (const group of groups) {
    const g = document.createElement("div");
    g.className = group.meld === null ? (group.mixed ? "group" : "group loose") : `group meld m${group.meld}`;
    for (const card of group.cards) {
      const c = makeCard(card);
      if (meldOf.has(card)) c.classList.add("melded", `m${meldOf.get(card)}`);
      g.append(c);
    }
    el.append(g);
  }
  return el;
}

// The lowest-deadwood arrangement of a few cards.  The service computes it for every
// hand it serves; the client needs its own to preview "discard X leaves N" (the view
// gives the deadwood of all eleven cards), to lay out a replayed position, and to open
// the knocker's arrangement step with the best melds of the ten cards kept.
function candidates(cards) {
  const out = [];
  const ranks = new Map();
  for (const c of cards) ranks.set(c[0], [...(ranks.get(c[0]) || []), c]);
  for (const same of ranks.values()) {
    if (same.length >= 3) out.push(same);
    if (same.length === 4) same.forEach((_, skip) => out.push(same.filter((__, i) => i !== skip)));
  }
  for (const suit of "CDHS") {
    const run = cards.filter((c) => c[1] === suit).sort(byRank);
    for (let i = 0; i < run.length; i++) {
      for (let j = i + 1; j < run.length && rankOf(run[j]) === rankOf(run[j - 1]) + 1; j++) {
        if (j - i >= 2) out.push(run.slice(i, j + 1));
      }
    }
  }
  return out;
}

// Two arrangements the other player meets alike: the same sets, and the same cards in
// runs (a run split in two takes the same layoffs as the whole).
function shapeKey(melds) {
  const isSet = (m) => m[0][0] === m[1][0];
  const sets = melds.filter(isSet).map((m) => [...m].sort().join(""));
  return [...sets.sort(), melds.filter((m) => !isSet(m)).flat().sort().join("")].join("|");
}

// Every choice of non-overlapping candidate melds with the most melded (so the least
// deadwood), at most `limit` of them, no two alike (shapeKey).
function lowest(cards, limit) {
  const index = new Map(cards.map((c, i) => [c, i]));
  const cands = candidates(cards).map((m) => ({
    cards: m,
    mask: m.reduce((acc, c) => acc | (1 << index.get(c)), 0),
    value: m.reduce((acc, c) => acc + valueOf(c), 0),
  }));
  let best = -1;
  let found = [];
  let seen = new Set();
  const chosen = [];
  (function search(start, used, value) {
    if (value > best) [best, found, seen] = [value, [], new Set()];
    if (value === best && found.length < limit && !seen.has(shapeKey(chosen))) {
      seen.add(shapeKey(chosen));
      found.push([...chosen]);
    }
    for (let i = start; i < cands.length; i++) {
      if (cands[i].mask & used) continue;
      chosen.push(cands[i].cards);
      search(i + 1, used | cands[i].mask, value + cands[i].value);
      chosen.pop();
    }
  })(0, 0, 0);
  return found;
}

export function bestMelds(cards) {
  const [melds] = lowest(cards, 1);
  const melded = new Set(melds.flat());
  const loose = cards.filter((c) => !melded.has(c)).sort(byRank);
  return { melds, deadwood_cards: loose, deadwood: deadwoodOf(loose) };
}

// Whether the cards make more than one arrangement of the least deadwood that the other
// player would meet differently: then the knocker has a choice to make even where the
// rules allow only the least deadwood.
export const hasChoiceOfLeast = (cards) => lowest(cards, 2).length > 1;

// --- single melds, as the rules define them (a person lays them out by hand) ----------

export const deadwoodOf = (cards) => cards.reduce((a, c) => a + valueOf(c), 0);

// "set" (3 or 4 cards of one rank), "run" (3 or more in a row in one suit; the ace is
// low only, so Q-K-A is no run), or null.
export function meldKind(cards) {
  if (cards.length < 3 || new Set(cards).size !== cards.length) return null;
  if (cards.every((c) => c[0] === cards[0][0])) return cards.length <= 4 ? "set" : null;
  if (!cards.every((c) => c[1] === cards[0][1])) return null;
  const ranks = cards.map(rankOf).sort((a, b) => a - b);
  return ranks.every((r, i) => i === 0 || r === ranks[i - 1] + 1) ? "run" : null;
}

// A meld's cards in the order they are laid out: a run by rank, a set by suit.
export const orderMeld = (cards) => [...cards].sort(byRank);
