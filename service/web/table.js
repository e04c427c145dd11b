// The table: both piles, the hand in melds, the actions the view lists as legal, the
// defense step, the hand result, and the running score.  Live updates come from the
// match's event stream; in a two-people-on-one-device match the hand is hidden between
// turns until the next player reveals it.

import { ApiError, api, followStream } from "./api.js";
import { bestMelds, cardBack, cardElement, cardName, handElement, pretty } from "./cards.js";
import { deadwoodOf, resultElement } from "./result.js";
import { pref, saveMatch, savedMatch, seatsOf, setPref } from "./saved.js";
import { downloadText, h, matchLength, problemText, says, seatLabel, toast } from "./ui.js";

export function mountTable(root, id) {
  const entry = savedMatch(id);
  if (!entry || !seatsOf(entry).length) {
    root.append(
      h("section.panel", {}, h("h1", {}, "Not your match"),
        h("p", {}, "This browser holds no seat token for this match, so it cannot show it. Matches you create or import here are listed in the "),
        h("a", { href: "#/history" }, "history"), "."),
    );
    return () => {};
  }
  const mySeats = seatsOf(entry);
  const hotseat = mySeats.length === 2;
  const S = {
    view: null, // the last view fetched (for the seat shown, or any seat while covered)
    shown: hotseat ? null : mySeats[0], // the seat whose hand is on screen (hotseat: null = covered)
    selected: null,
    sort: pref("sort", "melds"),
    busy: false,
    log: [],
    previousHand: null, // to mark the card just drawn
    drawn: null,
    resultSeen: entry.resultSeen || 0,
    streamSeq: 0,
    generation: 0,
  };
  const token = (seat) => entry.tokens[seat];
  const el = h("div.table#table");
  root.append(el);

  // --- data --------------------------------------------------------------------------

  // Only the newest request's answer counts: a slower, older one never overwrites it.
  async function load(seat) {
    const generation = ++S.generation;
    const view = await api.view(id, token(seat));
    if (generation === S.generation) accept(view);
  }

  function accept(view) {
    const seat = view.seat;
    // Two people on one device: a view of the other seat than the one revealed is never kept.
    if (hotseat && S.shown !== null && seat !== S.shown) return;
    if (S.view && S.view.seat === seat && S.view.hand_number === view.hand_number && view.phase === "discard" && S.previousHand) {
      const before = new Set(S.previousHand);
      S.drawn = view.hand.find((c) => !before.has(c)) || null;
    } else if (view.phase !== "discard") {
      S.drawn = null;
    }
    S.previousHand = view.hand;
    S.view = view;
    if (hotseat && S.shown !== null && view.turn !== S.shown) S.shown = null;
    if (S.selected && !view.hand.includes(S.selected)) S.selected = null;
    if (view.status === "finished") saveMatch(id, { finished: true });
  }

  const viewSeat = () => (hotseat ? (S.shown ?? mySeats[0]) : mySeats[0]);

  async function refresh() {
    if (S.busy) return;
    try {
      await load(viewSeat());
    } catch (err) {
      toast(problemText(err), "error");
    }
    render();
  }

  let pendingRefresh = null;
  function onStreamEvent(event) {
    S.streamSeq = Math.max(S.streamSeq, event.seq);
    if (S.busy || (S.view && event.seq <= S.view.version)) return; // act() catches up when it is done
    noteEvents([event]);
    clearTimeout(pendingRefresh);
    pendingRefresh = setTimeout(() => {
      if (!S.view || S.streamSeq > S.view.version) refresh();
    }, 60);
  }

  async function act(action) {
    if (S.busy || !S.view) return;
    const seat = S.view.seat;
    S.busy = true;
    S.generation++; // a refresh still on its way is older than this action
    render();
    try {
      const result = await api.act(id, token(seat), S.view.version, action);
      noteEvents(result.events);
      accept(result.view);
      S.selected = null;
    } catch (err) {
      if (err instanceof ApiError && (err.code === "version_mismatch" || err.code === "conflict")) {
        toast("The table changed in the meantime: here it is as it is now.", "info");
      } else {
        toast(problemText(err), "error");
      }
      S.busy = false;
      await refresh();
      return;
    }
    S.busy = false;
    render();
    if (S.streamSeq > S.view.version) refresh();
  }

  // What the other player did, as one line each.  Never names a card drawn from the
  // stock: in a shared-device match the log is seen by both players.
  function noteEvents(events) {
    const names = S.view ? S.view.seats.map((s) => s.name) : ["Seat 1", "Seat 2"];
    const me = S.view ? S.view.seat : null;
    for (const e of events) {
      const d = e.data;
      const who = names[d.seat] ?? "";
      let line = null;
      if (e.type === "card_drawn") line = d.source === "stock" ? `${who} drew from the stock` : `${who} took ${pretty(d.card)} from the pile`;
      else if (e.type === "card_discarded") line = `${who} discarded ${pretty(d.card)}`;
      else if (e.type === "upcard_passed") line = `${who} passed the upcard`;
      else if (e.type === "knocked") line = `${who} discarded ${pretty(d.card)} and ${d.gin ? "went Gin" : `knocked with ${d.deadwood}`}`;
      else if (e.type === "hand_dealt") line = `Hand ${d.hand} dealt; ${names[d.starter]} starts`;
      if (line && (hotseat || d.seat !== me || e.type === "hand_dealt")) S.log.push(line);
    }
    S.log = S.log.slice(-4);
  }

  // --- rendering ---------------------------------------------------------------------

  function render() {
    const v = S.view;
    if (!v) {
      el.replaceChildren(h("p.loading", {}, "Loading the table…"));
      return;
    }
    el.dataset.phase = v.phase;
    el.dataset.version = v.version;
    el.classList.toggle("busy", S.busy);
    const active = document.activeElement;
    const handHadFocus = Boolean(active && active.closest && active.closest("#hand"));
    const names = v.seats.map((s) => s.name);
    const parts = [scoreBar(v)];
    const newResult = v.last_hand && v.last_hand.hand > S.resultSeen;
    if (newResult || v.status === "finished") parts.push(resultPanel(v, names));
    else if (hotseat && (S.shown === null || S.shown !== v.turn || v.seat !== S.shown)) parts.push(cover(v, names));
    else parts.push(...tableParts(v, names));
    el.replaceChildren(...parts);
    if (handHadFocus) {
      const target = el.querySelector(`#hand [data-card="${S.focus}"]`) || el.querySelector("#hand .card");
      if (target) target.focus();
    }
  }

  function scoreBar(v) {
    const turn = v.turn;
    return h(
      "div.scorebar",
      { "aria-label": "Score" },
      v.seats.map((s, i) =>
        h(`span.player${turn === i ? ".to-act" : ""}`, { dataset: { seat: i } }, h("b", {}, s.name), " ", h("span.score", {}, v.scores[i])),
      ),
      h("span.meta", {}, `${v.rules.preset} · ${matchLength(v.rules)} · hand ${v.hand_number}`),
    );
  }

  function cover(v, names) {
    const next = v.turn;
    return h(
      "section.panel.cover#cover",
      { dataset: { next } },
      h("h2", {}, `Pass the device to ${names[next]}`),
      h("p", {}, `${names[1 - next]}'s cards are hidden. ${names[next]}, reveal your hand when the other player is not looking.`),
      S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null,
      h("button.primary#reveal", { type: "button", onclick: () => reveal(next) }, `Reveal ${names[next]}'s hand`),
    );
  }

  async function reveal(seat) {
    S.shown = seat;
    S.previousHand = null;
    S.drawn = null;
    try {
      await load(seat);
    } catch (err) {
      toast(problemText(err), "error");
    }
    render();
  }

  function tableParts(v, names) {
    const me = v.seat;
    const opp = 1 - me;
    const legal = v.legal_actions;
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
    const stock = h(
      "button.pile.stock#stock",
      { type: "button", disabled: !stockAction || S.busy, onclick: () => act(stockAction), "aria-label": `Stock, ${v.stock_count} cards${stockAction ? ": draw" : ""}` },
      v.stock_count ? cardBack() : h("span.card.empty"),
      h("span.count", {}, `${v.stock_count}`),
    );
    const under = v.discard_pile[v.discard_pile.length - 2];
    const pile = h(
      "button.pile.discard#pile",
      { type: "button", disabled: !pileAction || S.busy, onclick: () => act(pileAction), "aria-label": top ? `Discard pile, ${cardName(top)} on top${pileAction ? ": take it" : ""}` : "Discard pile, empty" },
      under ? h("span.under", {}, cardElement(under)) : null,
      top ? cardElement(top) : h("span.card.empty"),
      h("span.count", {}, `${v.discard_pile.length}`),
    );
    const passAction = find("pass");
    const piles = h(
      "section.piles",
      { "aria-label": "Piles" },
      h("div.pilebox", {}, stock, h("span.label", {}, "Stock", v.rules.dead_hand_stock ? ` · dead at ${v.rules.dead_hand_stock}` : "")),
      h("div.pilebox", {}, pile, h("span.label", {}, v.phase === "upcard_offer" ? "Upcard" : "Discard pile")),
      passAction ? h("button#pass", { type: "button", onclick: () => act(passAction), disabled: S.busy }, "Pass") : null,
    );

    const status = h("p.status#status", { role: "status" }, statusText(v, names, { stockAction, pileAction }));
    const log = S.log.length ? h("ul.log", {}, S.log.map((l) => h("li", {}, l))) : null;
    const defense = v.phase === "defense" && myTurn ? defensePanel(v, names) : null;
    return [oppEl, piles, status, log, defense, handPanel(v, names, find)].filter(Boolean);
  }

  function statusText(v, names, { stockAction, pileAction }) {
    const me = v.seat;
    const top = v.discard_pile[v.discard_pile.length - 1];
    if (v.turn !== me) return v.turn === null ? "" : `Waiting for ${names[v.turn]}…`;
    if (v.phase === "upcard_offer") return `Take the upcard ${pretty(top)} (click the pile) or pass.`;
    if (v.phase === "draw") {
      if (!pileAction) return "Draw from the stock: the upcard was passed by both players.";
      return `Your turn: draw from the stock or take ${pretty(top)} from the discard pile.`;
    }
    if (v.phase === "discard") {
      if (v.no_return) return `You took ${pretty(v.no_return)} from the pile: it cannot go back this turn. Choose a card to discard.`;
      return "Choose a card to discard: click it once to select, again to discard.";
    }
    if (v.phase === "defense") return `${names[v.knock.seat]} knocked: confirm your defense.`;
    return "";
  }

  function handPanel(v, names, find) {
    const discarding = v.phase === "discard" && v.turn === v.seat;
    const enders = new Map(v.legal_actions.filter((a) => a.type === "knock" || a.type === "gin").map((a) => [a.card, a]));
    const sel = S.selected;
    const makeCard = (card) => {
      const c = cardElement(card, { button: true });
      c.tabIndex = card === (S.focus || S.selected) ? 0 : -1;
      if (card === sel) c.classList.add("selected"), c.setAttribute("aria-pressed", "true");
      if (card === S.drawn) c.classList.add("drawn");
      if (card === v.no_return && discarding) {
        c.classList.add("no-return");
        c.setAttribute("aria-disabled", "true");
        c.title = "Taken from the pile this turn: it cannot be discarded now";
        c.append(h("span.lock", { "aria-hidden": "true" }, "↩✕"));
      }
      if (discarding && enders.has(card)) {
        c.classList.add("can-end");
        c.append(h("span.badge", { title: enders.get(card).type === "gin" ? "discard it to go Gin" : "discard it to knock" }, enders.get(card).type === "gin" ? "G" : "K"));
      }
      c.addEventListener("click", () => cardClicked(card));
      return c;
    };
    const handEl = handElement(v.hand, v.melds, S.sort, makeCard);
    handEl.id = "hand";
    handEl.setAttribute("role", "group");
    handEl.setAttribute("aria-label", `${names[v.seat]}'s hand`);
    handEl.dataset.seat = v.seat;
    handEl.addEventListener("keydown", handKeys);
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
    const knockable = [...enders.keys()];
    const sortButton = (mode, label) =>
      h(`button.sort${S.sort === mode ? ".on" : ""}`, { type: "button", "aria-pressed": String(S.sort === mode), onclick: () => setSort(mode) }, label);
    const controls = h(
      "div.controls",
      {},
      h("div.sorts", { role: "group", "aria-label": "Sort" }, "Sort: ", sortButton("melds", "Melds"), sortButton("rank", "Rank"), sortButton("suit", "Suit")),
      h(
        "div.acts",
        { hidden: !(v.turn === v.seat && (v.phase === "draw" || v.phase === "discard")) },
        h("button#discard", { type: "button", disabled: !discardA || S.busy, onclick: () => act(discardA) }, "Discard"),
        h("button.knock#knock", { type: "button", disabled: !knockA || S.busy, onclick: () => act(knockA) }, "Knock"),
        h("button.gin#gin", { type: "button", disabled: !ginA || S.busy, onclick: () => act(ginA) }, "Gin"),
      ),
    );
    const hint =
      discarding && knockable.length && !knockA && !ginA
        ? h("p.hint#end-hint", {}, `You can ${enders.get(knockable[0]).type === "gin" ? "go Gin" : "knock"}: select ${knockable.map(pretty).join(" or ")} (marked K/G) to discard.`)
        : null;
    return h("section.mine", { "aria-label": "Your hand" }, deadwood, handEl, controls, hint, keysHelp());
  }

  function keysHelp() {
    return h(
      "details.keys",
      {},
      h("summary", {}, "Keyboard"),
      h("p", {}, "S draw from the stock · P take from the pile · ←/→ move between cards · Enter or Space select, then discard · D discard · K knock · G Gin · A pass the upcard"),
    );
  }

  function setSort(mode) {
    S.sort = mode;
    setPref("sort", mode);
    render();
  }

  function cardClicked(card) {
    const v = S.view;
    S.focus = card;
    if (!(v.phase === "discard" && v.turn === v.seat) || S.busy) {
      if (v.phase === "draw" && v.turn === v.seat) toast("Draw first: click the stock or the discard pile.");
      return;
    }
    if (card === v.no_return) {
      toast(`${pretty(card)} was taken from the pile this turn: it cannot be discarded now.`);
      return;
    }
    if (S.selected === card) {
      const a = v.legal_actions.find((x) => x.type === "discard" && x.card === card);
      if (a) act(a);
      return;
    }
    S.selected = card;
    render();
  }

  function handKeys(event) {
    const cards = [...el.querySelectorAll("#hand .card")];
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
      S.focus = next.dataset.card;
    }
  }

  function tableKeys(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || !S.view || event.target.matches("input, select, textarea")) return;
    const key = event.key.toLowerCase();
    const click = (sel) => {
      const b = el.querySelector(sel);
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
    else if (key === "a") click("#pass");
  }
  document.addEventListener("keydown", tableKeys);

  // --- the defense step ----------------------------------------------------------------

  function defensePanel(v, names) {
    const knock = v.knock;
    const action = v.legal_actions.find((a) => a.type === "defend");
    const used = new Set([...action.melds.flat(), ...action.layoffs.map((x) => x.card)]);
    const left = v.hand.filter((c) => !used.has(c));
    const mine = deadwoodOf(left);
    const outcome =
      mine <= knock.deadwood
        ? `Undercut: you score ${knock.deadwood - mine} + ${v.rules.undercut_bonus}.`
        : `${says(names[knock.seat], "scores")} ${mine - knock.deadwood}.`;
    const knockerMelds = h(
      "div.laid",
      {},
      knock.melds.map((meld, i) => {
        const row = h(`div.row.meld.m${i}`, {}, h("span.n", {}, `${i + 1}`), meld.map((c) => cardElement(c, { small: true })));
        for (const x of action.layoffs.filter((y) => y.meld === i)) {
          const c = cardElement(x.card, { small: true });
          c.classList.add("laidoff");
          row.append(c);
        }
        return row;
      }),
    );
    return h(
      "section.panel.defense#defense",
      { "aria-label": "Defense" },
      h("h2", {}, `${says(names[knock.seat], "knocks")} with ${knock.deadwood} (discarded ${pretty(knock.card)})`),
      h("p", {}, `${names[knock.seat]}'s melds, with your suggested layoffs:`),
      knockerMelds,
      h("p", {}, "Your melds: ", action.melds.length ? action.melds.map((m) => m.map(pretty).join(" ")).join("  ·  ") : "none"),
      h(
        "p",
        {},
        "Lay off: ",
        action.layoffs.length ? action.layoffs.map((x) => `${pretty(x.card)} onto meld ${x.meld + 1}`).join(", ") : "nothing fits",
      ),
      h("p", {}, "Your deadwood after the layoffs: ", h("b#defense-deadwood", {}, String(mine)), left.length ? ` (${left.map(pretty).join(" ")})` : "", ". ", outcome),
      h("button.primary#confirm-defense", { type: "button", disabled: S.busy, onclick: () => act(action) }, "Confirm defense"),
    );
  }

  // --- the hand result ---------------------------------------------------------------

  function resultPanel(v, names) {
    const hand = v.last_hand;
    const finished = v.status === "finished";
    const totals = h("p.totals", {}, "Score: ", v.seats.map((s, i) => `${s.name} ${v.scores[i]}`).join(" · "), finished ? "" : ` (to ${v.rules.target_score})`);
    const buttons = h("div.actions");
    const replay = hand ? h("a.button#replay-link", { href: `#/replay/${id}/${hand.hand}` }, "Replay this hand") : null;
    if (!finished) {
      buttons.append(...[h("button.primary#next-hand", { type: "button", onclick: () => dismissResult(hand.hand) }, "Next hand"), replay].filter(Boolean));
    } else {
      buttons.append(
        ...[replay, h("button#export", { type: "button", onclick: exportRecord }, "Export record"), h("a.button.primary", { href: "#/" }, "New match")].filter(Boolean),
      );
    }
    const winner = finished && v.winner !== null ? h("h2.match-winner", {}, `${says(names[v.winner], "wins")} the match ${Math.max(...v.scores)}–${Math.min(...v.scores)}`) : null;
    return h(
      "section.panel.result-panel#result",
      {},
      finished ? h("p.hint", {}, "Match over") : null,
      winner,
      hand ? resultElement(hand, names, v.rules) : h("p", {}, "No hand was completed."),
      totals,
      buttons,
    );
  }

  function dismissResult(n) {
    S.resultSeen = n;
    saveMatch(id, { resultSeen: n });
    if (hotseat) S.shown = null;
    render();
  }

  async function exportRecord() {
    try {
      const record = await api.exportRecord(id, token(viewSeat()));
      downloadText(`gin-rummy-${id}.json`, record);
    } catch (err) {
      toast(problemText(err), "error");
    }
  }

  // --- start ---------------------------------------------------------------------------

  let stopStream = () => {};
  render();
  load(viewSeat())
    .then(() => {
      render();
      if (S.view.status === "active") stopStream = followStream(id, token(mySeats[0]), S.view.version, onStreamEvent);
    })
    .catch((err) => {
      el.replaceChildren(
        h("section.panel", {}, h("h1", {}, "This match cannot be shown"), h("p", {}, problemText(err)), h("a", { href: "#/history" }, "History")),
      );
    });

  return () => {
    stopStream();
    clearTimeout(pendingRefresh);
    document.removeEventListener("keydown", tableKeys);
  };
}
