// The hand replay viewer: a finished hand (GET /matches/{id}/hands/{n}) stepped through
// event by event, from the deal to the score.  The coach's analysis of the hand, where
// the service gives it, marks each decision (good, inaccuracy, mistake, blunder) with the
// better play beside a costly one, and gives each seat's accuracy, in the hand and the match.

import { api } from "./api.js";
import { bestMelds, cardBack, cardElement, handElement, playText, pretty } from "./cards.js";
import { describeResult, resultElement } from "./result.js";
import { savedMatch, tokenFor } from "./saved.js";
import { endText, h, problemText, says, touchOnly, verbFor } from "./ui.js";

// Every position of the hand: the deal, then one per event.
export function replaySteps(detail, names) {
  const deal = detail.deal;
  let state = { hands: deal.hands.map((x) => [...x]), pile: [deal.upcard], stock: deal.stock.length, moved: null, knock: null };
  const steps = [{ seq: detail.first_seq, caption: `Hand ${detail.hand} dealt: ${names[detail.starter]} starts; the upcard is ${pretty(deal.upcard)}.`, state }];
  for (const play of detail.plays) {
    const hands = state.hands.map((x) => [...x]);
    const pile = [...state.pile];
    let stock = state.stock;
    let knock = state.knock;
    const who = names[play.seat];
    let caption;
    if (play.action === "pass") caption = `${says(who, "passes")} the upcard.`;
    else if (play.action === "draw") {
      hands[play.seat].push(play.card);
      if (play.source === "stock") stock -= 1;
      else pile.pop();
      caption = play.source === "stock" ? `${says(who, "draws")} ${pretty(play.card)} from the stock.` : `${says(who, "takes")} ${pretty(play.card)} from the discard pile.`;
    } else if (play.action === "big_gin") {
      // Big Gin: all eleven cards laid down, none discarded (its card is the one drawn).
      knock = detail.knock;
      caption = `${says(who, "lays")} down all eleven cards: Big Gin.`;
    } else {
      hands[play.seat] = hands[play.seat].filter((c) => c !== play.card);
      pile.push(play.card);
      if (play.action === "discard") caption = `${says(who, "discards")} ${pretty(play.card)}.`;
      else {
        knock = detail.knock;
        caption = `${says(who, "discards")} ${pretty(play.card)} and ${play.action === "gin" ? `${verbFor(who, "goes")} Gin` : `${verbFor(who, "knocks")} with ${detail.knock.deadwood}`}.`;
      }
    }
    state = { hands, pile, stock, moved: play.action === "big_gin" ? null : play.card ?? null, knock, mover: play.seat };
    steps.push({ seq: play.seq, caption, state, play });
  }
  if (detail.defense) {
    const d = detail.defense;
    const lays = verbFor(names[d.seat], "lays");
    const laid = d.layoffs.length ? `${lays} off ${d.layoffs.map((x) => `${pretty(x.card)} on meld ${x.meld + 1}`).join(", ")}` : `${lays} off nothing`;
    steps.push({ seq: null, caption: `${says(names[d.seat], "melds")} ${d.melds.length ? d.melds.map((m) => m.map(pretty).join(" ")).join(", ") : "nothing"} and ${laid}: deadwood ${d.deadwood}.`, state: { ...state, moved: null, defense: d } });
  }
  if (detail.end) steps.push({ seq: detail.last_seq, caption: "The score", state: { ...state, moved: null }, end: true });
  else if (detail.match_end && detail.match_end.reason !== "score") {
    // The hand was not played out: a player resigned, or ran out of time.
    const m = detail.match_end;
    steps.push({ seq: detail.last_seq, caption: endText(m.reason, m.winner, names), state: { ...state, moved: null } });
  }
  return steps;
}

export function mountReplay(root, id, number) {
  const entry = savedMatch(id);
  const token = tokenFor(entry, { orPlayer: true }); // a seat token kept here, or the player's
  const panel = h("section.panel.replay#replay", {}, h("h1", {}, "Replay"), h("p.loading", {}, "Loading the hand…"));
  root.append(panel);
  if (!token) {
    panel.replaceChildren(h("h1", {}, "Replay"), h("p", {}, "This browser holds no seat token for this match, and plays as no player."));
    return () => {};
  }
  let steps = [];
  let at = 0;
  let names = [];
  let detail = null;
  let rules = null;
  let timer = null;
  const board = h("div.board#replay-board");
  const caption = h("p.caption#replay-caption", { "aria-live": "polite" });
  const counter = h("span.counter#replay-step");
  const slider = h("input#replay-slider", { type: "range", min: "0", value: "0", "aria-label": "Step", oninput: () => go(Number(slider.value)) });
  const button = (sid, label, title, onclick) => h(`button#${sid}`, { type: "button", title, "aria-label": title, onclick }, label);
  const play = button("replay-play", "Play", "Play the events one after another", toggle);
  const controls = h(
    "div.stepper",
    {},
    button("replay-first", "«", "First", () => go(0)),
    button("replay-prev", "◀", "Previous event", () => go(at - 1)),
    counter,
    button("replay-next", "▶", "Next event", () => go(at + 1)),
    button("replay-last", "»", "Last", () => go(steps.length - 1)),
    play,
  );
  const select = h("select#replay-hand", { "aria-label": "Hand", onchange: () => (location.hash = `#/replay/${id}/${select.value}`) });
  const verdict = h("p.verdict#replay-verdict", { "aria-live": "polite" });
  const marks = h("div.marks#replay-marks", { role: "group", "aria-label": "Decisions, by their class", hidden: true });
  const accuracy = h("div.accuracy#replay-accuracy", { hidden: true });

  function keys(event) {
    if (event.target.matches("input, select, textarea")) return;
    const moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: steps.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key]);
    }
  }
  document.addEventListener("keydown", keys);

  function toggle() {
    if (timer) return stop();
    if (at >= steps.length - 1) go(0);
    timer = setInterval(() => (at >= steps.length - 1 ? stop() : go(at + 1)), 900);
    play.textContent = "Pause";
  }
  function stop() {
    clearInterval(timer);
    timer = null;
    play.textContent = "Play";
  }

  function go(i) {
    at = Math.max(0, Math.min(steps.length - 1, i));
    slider.value = String(at);
    counter.textContent = `${at} / ${steps.length - 1}`;
    const step = steps[at];
    caption.textContent = step.end ? describeResult(endHand(detail, steps), names, rules).title : step.caption;
    board.dataset.step = String(at);
    board.replaceChildren(...(step.end ? [resultElement(endHand(detail, steps), names, rules)] : position(step.state, names)));
    verdict.replaceChildren(...verdictParts(steps, at));
    for (const mark of marks.children) mark.classList.toggle("at", Number(mark.dataset.step) === at);
  }

  // --- the coach's analysis ----------------------------------------------------------

  // Shown only where the service gives the analysis (a seat, once the hand is over).
  async function loadAnalysis() {
    const [hand, match] = await Promise.allSettled([api.handAnalysis(id, token, number), api.matchAnalysis(id, token)]);
    if (hand.status !== "fulfilled") return;
    const bySeq = new Map(hand.value.decisions.map((d) => [d.seq, d]));
    steps.forEach((step) => step.play && (step.decision = bySeq.get(step.seq)));
    marks.replaceChildren(
      ...steps.map((step, i) => {
        const d = step.decision;
        if (!d) return h("span.mark", { dataset: { step: i }, "aria-hidden": "true" });
        const label = `Step ${i}: ${names[d.seat]}, ${d.class}`;
        return h(`button.mark.${d.class}`, { type: "button", tabIndex: -1, title: label, "aria-label": label, dataset: { step: i, seat: d.seat, class: d.class }, onclick: () => go(i) });
      }),
    );
    marks.hidden = false;
    const whole = match.status === "fulfilled" ? match.value : null;
    accuracy.replaceChildren(...accuracyParts(names, hand.value, whole));
    accuracy.hidden = false;
    go(at);
  }

  (async () => {
    try {
      const [list, view] = await Promise.all([api.hands(id, token), api.view(id, token)]);
      names = view.seats.map((s) => s.name);
      rules = view.rules;
      select.replaceChildren(
        ...list.hands.map((x) =>
          h("option", { value: String(x.hand), disabled: x.status !== "over" }, `Hand ${x.hand}${x.status === "over" ? ` — ${x.result || (x.match_end ? x.match_end.reason : "over")}` : " (being played)"}`),
        ),
      );
      select.value = String(number);
      const over = list.hands.find((x) => x.hand === number && x.status === "over");
      if (!over) {
        panel.replaceChildren(
          h("h1", {}, "Replay"),
          select,
          h("p", {}, list.hands.length ? `Hand ${number} is not over yet: a hand can be replayed once it is finished.` : "No hand has been dealt yet."),
        );
        return;
      }
      detail = await api.hand(id, token, number);
      steps = replaySteps(detail, names);
      slider.max = String(steps.length - 1);
      panel.replaceChildren(
        h("h1", {}, "Replay ", select),
        h("p.hint", {}, `${names.join(" vs ")} · deal ${detail.deal.commitment_valid ? "verified against its commitment ✓" : "does NOT match its commitment ✗"}`),
        caption,
        verdict,
        board,
        controls,
        marks,
        slider,
        touchOnly() ? null : h("p.hint#replay-keys", {}, "← / → step through the events · Home / End jump to the deal / the score"),
        accuracy,
        h("div.actions", {}, h("a.button", { href: `#/play/${id}` }, "Back to the table"), h("a.button", { href: entry && entry.tokens ? "#/history" : "#/games" }, entry && entry.tokens ? "History" : "My games")),
      );
      go(0);
      await loadAnalysis();
    } catch (err) {
      panel.replaceChildren(h("h1", {}, "Replay"), h("p", {}, problemText(err)));
    }
  })();

  return () => {
    stop();
    document.removeEventListener("keydown", keys);
  };
}

// The decision made at step i: its class, and beside a costly one the better play.
function verdictParts(steps, i) {
  const d = steps[i].decision;
  if (!d) return [];
  const before = steps[i - 1].state.pile;
  const parts = [classBadge(d.class)];
  if (d.class !== "good") {
    parts.push(" ", h("span.better", {}, `Better: ${playText(d.best, before[before.length - 1])}`), ` — ${d.reason}`, h("span.cost", {}, ` (it cost about ${d.cost.toFixed(1)} points)`));
  }
  return parts;
}

const classBadge = (name) => h(`span.class-badge.${name}`, {}, name);

const accuracyText = (x) => (x === null || x === undefined ? "—" : String(x));
const MANY = { good: "good", inaccuracy: "inaccuracies", mistake: "mistakes", blunder: "blunders" };
function countsText(counts) {
  const some = Object.keys(MANY).filter((c) => counts[c]);
  return some.length ? some.map((c) => `${counts[c]} ${counts[c] === 1 ? c : MANY[c]}`).join(" · ") : "no decision";
}

// Each seat's accuracy in the hand (with its decisions by class) and in the match.
function accuracyParts(names, hand, whole) {
  return [
    h(
      "table",
      {},
      h("caption", {}, "Accuracy"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Seat"), h("th", { scope: "col" }, "This hand"), whole ? h("th", { scope: "col" }, "The match") : null)),
      h(
        "tbody",
        {},
        names.map((name, seat) =>
          h(
            "tr",
            { dataset: { seat } },
            h("th", { scope: "row" }, name),
            h("td.hand-accuracy", {}, h("b", {}, accuracyText(hand.accuracy[seat])), " ", h("span.hint", {}, countsText(hand.counts[seat]))),
            whole ? h("td.match-accuracy", {}, h("b", {}, accuracyText(whole.accuracy[seat]))) : null,
          ),
        ),
      ),
    ),
    h("p.hint", {}, "100: every play as good as the coach's best; each point a play cost takes 10 off it."),
  ];
}

function endHand(detail, steps) {
  const last = steps[steps.length - 1].state;
  return { ...detail.end, knock: detail.knock, defense: detail.defense, hands: last.hands };
}

function position(state, names) {
  const seatRow = (seat) => {
    const hand = state.hands[seat];
    const laid = [state.knock, state.defense].find((x) => x && x.seat === seat);
    const melds = laid ? laid.melds : bestMelds(hand).melds;
    const el = handElement(hand, melds, "melds", (c) => {
      const card = cardElement(c, { small: true });
      if (c === state.moved && state.mover === seat) card.classList.add("moved");
      return card;
    });
    el.dataset.seat = seat;
    return h(`div.seat-row${state.mover === seat ? ".acting" : ""}`, {}, h("b", {}, names[seat]), el);
  };
  const top = state.pile[state.pile.length - 1];
  const topEl = top ? cardElement(top) : h("span.card.empty");
  if (top && top === state.moved) topEl.classList.add("moved");
  return [
    seatRow(0),
    h(
      "div.piles",
      {},
      h("div.pilebox", {}, h("span.pile", {}, state.stock ? cardBack() : h("span.card.empty"), h("span.count", {}, String(state.stock))), h("span.label", {}, "Stock")),
      h("div.pilebox", {}, h("span.pile", {}, topEl, h("span.count", {}, String(state.pile.length))), h("span.label", {}, "Discard pile")),
    ),
    seatRow(1),
  ];
}
