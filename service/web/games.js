// My games: the player's matches (GET /players/me/matches), those being played first
// (and those waiting for someone to join), then the finished ones, each list with the
// games waiting for the player's move first, then newest first, in pages.  A badge marks the games waiting for the player's move; a clock counts down.
// The list is asked for again every 15 s while the page is visible (no faster: a move
// is seen at once on the table, through its stream).

import { ApiError, api, serverNow } from "./api.js";
import { setCount } from "./header.js";
import { currentPlayer } from "./saved.js";
import { agoText, h, plural, problemText, remainingText, seatLabel } from "./ui.js";

// The order of the list: each status is read to its end before the next.
const PHASES = ["active", "waiting", "finished"];
const PAGE = 20;
const REFRESH_MS = 15_000;

export function mountGames(root) {
  const me = currentPlayer();
  if (!me) {
    root.append(noPlayerPanel());
    return () => {};
  }
  const playing = h("ul.games#games-playing");
  const finished = h("ul.games#games-finished");
  const playingBox = h("section.games-section", { hidden: true }, h("h2", {}, "Playing"), playing);
  const finishedBox = h("section.games-section", { hidden: true }, h("h2", {}, "Finished"), finished);
  const status = h("p.hint#games-status", { role: "status" }, "Loading…");
  const more = h("button#games-more", { type: "button", hidden: true, onclick: () => loadMore() }, "More");
  const refresh = h("button#games-refresh", { type: "button", onclick: () => reload() }, "Refresh");
  const panel = h(
    "section.panel.games-panel#games",
    {},
    h("div.title-row", {}, h("h1", {}, "My games"), refresh),
    h("p.hint", {}, `The matches of ${me.name}, on every device where you use this player.`),
    status,
    playingBox,
    finishedBox,
    more,
  );
  root.append(panel);

  let alive = true;
  let busy = false;
  let items = []; // in the order shown
  let phase = 0; // where the next page comes from
  let cursor = null;
  let lastLoad = 0;

  async function run(task) {
    if (busy) return;
    busy = true;
    refresh.disabled = more.disabled = true;
    try {
      await task();
      lastLoad = Date.now();
    } catch (err) {
      if (!alive) return;
      status.textContent =
        err instanceof ApiError && err.status === 401
          ? "The service no longer accepts this browser's player token: see your profile."
          : `Your games cannot be shown: ${problemText(err)}`;
    } finally {
      busy = false;
      refresh.disabled = more.disabled = false;
    }
  }

  const loadMore = () =>
    run(async () => {
      const next = await fetchFrom(me, { phase, cursor }, PAGE);
      if (!alive) return;
      items = items.concat(next.got.filter((m) => !items.some((x) => x.id === m.id)));
      ({ phase, cursor } = next);
      draw();
    });

  // The same number of games as shown, asked for again (a move, a new match, the end).
  const reload = () =>
    run(async () => {
      const next = await fetchFrom(me, { phase: 0, cursor: null }, Math.max(PAGE, items.length));
      if (!alive) return;
      items = next.got;
      ({ phase, cursor } = next);
      draw();
    });

  function draw() {
    const open = items.filter((m) => m.status !== "finished");
    const done = items.filter((m) => m.status === "finished");
    playing.replaceChildren(...open.map(row));
    finished.replaceChildren(...done.map(row));
    playingBox.hidden = !open.length;
    finishedBox.hidden = !done.length;
    more.hidden = phase >= PHASES.length;
    const turns = items.filter((m) => m.your_turn).length;
    if (!items.length) status.textContent = "No games yet: start a match (against the computer or a friend), or join one from the lobby.";
    else status.textContent = turns ? `${plural(turns, "game")} waiting for your move.` : "No game is waiting for your move.";
    // Every game being played is in the list: the header's count is known.
    if (phase > 0) setCount(turns);
    tick(panel);
  }

  function visible() {
    if (!document.hidden && Date.now() - lastLoad >= REFRESH_MS) reload();
  }

  const clocks = setInterval(() => tick(panel), 1000);
  const timer = setInterval(() => !document.hidden && reload(), REFRESH_MS);
  document.addEventListener("visibilitychange", visible);
  loadMore();

  return () => {
    alive = false;
    clearInterval(clocks);
    clearInterval(timer);
    document.removeEventListener("visibilitychange", visible);
  };
}

function noPlayerPanel() {
  return h(
    "section.panel.games-panel#games-none",
    {},
    h("h1", {}, "My games"),
    h("p", {}, "My games lists the matches of a player, on every device where you use that player: whose turn it is, the score, the clock."),
    h("div.actions", {}, h("a.button.primary", { href: "#/profile" }, "Continue as a guest")),
  );
}

// Pages from (phase, cursor) on, until `wanted` more items or the end.
async function fetchFrom(me, start, wanted) {
  const got = [];
  let p = start.phase;
  let c = start.cursor;
  while (p < PHASES.length && got.length < wanted) {
    const page = await api.myMatches(me.token, { status: PHASES[p], cursor: c, limit: Math.min(100, wanted - got.length) });
    got.push(...page.items);
    if (page.next_cursor) c = page.next_cursor;
    else {
      p += 1;
      c = null;
    }
  }
  return { got, phase: p, cursor: c };
}

function row(m) {
  const opp = m.opponent;
  const oppName =
    opp.kind === "human" && opp.player
      ? h("a.opponent-link", { href: `#/players/${opp.player}` }, opp.name)
      : h("span", {}, opp.kind === "open" ? "a player yet to join" : seatLabel(opp));
  const mine = m.scores[m.seat];
  const theirs = m.scores[1 - m.seat];
  const where = [];
  if (m.status === "waiting") where.push("waiting for a player to join");
  else if (m.status === "active") {
    where.push(`hand ${m.hand_number}`, `${mine}–${theirs}`);
    where.push(m.your_turn ? "your move" : `${opp.name}'s move`);
  } else where.push(outcome(m, opp.name, mine, theirs));
  const clock =
    m.status === "active" && m.deadline
      ? h("span.game-clock", { dataset: { deadline: m.deadline, mine: String(m.your_turn) }, role: "timer" }, h("span.icon", { "aria-hidden": "true" }), h("span.left", {}, ""))
      : null;
  const label = m.status === "finished" ? "Final table" : m.your_turn ? "Play" : m.status === "waiting" ? "Invite" : "Open";
  return h(
    `li.game${m.your_turn ? ".your-turn" : ""}`,
    { dataset: { id: m.id, status: m.status, yourTurn: String(m.your_turn) } },
    h(
      "div.what",
      {},
      h("b", {}, "vs ", oppName),
      m.your_turn ? h("span.turn-badge", { title: "It is your move" }, "Your turn") : null,
      h("div.where", {}, where.join(" · "), clock ? " · " : "", clock),
      h("div.when.hint", {}, `started ${agoText(m.created_at, serverNow())}`),
    ),
    h(
      "div.row-actions",
      {},
      h(`a.button${m.your_turn ? ".primary" : ""}.open-game`, { href: `#/play/${m.id}` }, label),
      m.status === "finished" && m.hand_number > 0 ? h("a.button", { href: `#/replay/${m.id}/1` }, "Replay") : null,
    ),
  );
}

function outcome(m, other, mine, theirs) {
  const won = m.winner === m.seat;
  if (m.end_reason === "aborted") return "called off";
  if (m.winner === null) return `nobody won, ${mine}–${theirs}`;
  if (m.end_reason === "resigned") return won ? `${other} resigned: you won` : "you resigned";
  if (m.end_reason === "timeout") return won ? `${other} ran out of time: you won` : "you ran out of time";
  return won ? `you won ${mine}–${theirs}` : `${other} won ${theirs}–${mine}`;
}

// The clocks, every second, without asking the service.
function tick(panel) {
  for (const el of panel.querySelectorAll(".game-clock")) {
    const left = Date.parse(el.dataset.deadline) - serverNow();
    const mine = el.dataset.mine === "true";
    el.classList.toggle("low", left < 60_000);
    el.querySelector(".left").textContent = left > 0 ? `${remainingText(left)} ${mine ? "left to move" : "left for them"}` : mine ? "your time is up" : "their time is up";
  }
}
