// The leaderboard: the players with an established rating, enough rated matches and
// enough established opponents, best first (GET /leaderboard, in pages); each name opens
// the player's public profile.

import { api } from "./api.js";
import { currentPlayer } from "./saved.js";
import { h, problemText, rounded } from "./ui.js";

export function mountLeaderboard(root) {
  const body = h("tbody#leaderboard-rows");
  const table = h(
    "table.leaderboard#leaderboard",
    { hidden: true },
    h("caption.sr-only", {}, "Players by rating"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th.rank", { scope: "col" }, h("abbr", { title: "Rank" }, "#")),
        h("th", { scope: "col" }, "Player"),
        h("th.num", { scope: "col" }, "Rating"),
        h("th.num", { scope: "col" }, h("abbr", { title: "Rated matches" }, "Matches")),
        h("th.num", { scope: "col" }, "Wins"),
      ),
    ),
    body,
  );
  const note = h("p.hint#leaderboard-note", {}, "");
  const status = h("p.hint#leaderboard-status", { role: "status" }, "Loading…");
  const more = h("button#leaderboard-more", { type: "button", hidden: true, onclick: () => load(cursor) }, "More");
  const refresh = h("button#leaderboard-refresh", { type: "button", onclick: () => load(null) }, "Refresh");
  root.append(
    h(
      "section.panel.leaderboard-panel",
      {},
      h("div.title-row", {}, h("h1", {}, "Leaderboard"), refresh),
      note,
      status,
      table,
      more,
    ),
  );
  let cursor = null;
  let alive = true;
  let loading = false;
  load(null);

  async function load(after) {
    if (loading) return;
    loading = true;
    refresh.disabled = more.disabled = true;
    try {
      const page = await api.leaderboard(after);
      if (!alive) return;
      if (!after) body.replaceChildren();
      body.append(...page.items.map(row));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      const n = body.children.length;
      const min = page.min_matches;
      const needs = `an established rating (deviation at most ${page.max_deviation}), at least ${min} rated matches and at least ${page.min_opponents} different established opponents`;
      note.textContent = `Players with ${needs}, by Glicko-2 rating. A match is rated when two players (not the computer) both make a move before it ends; resigning or running out of time is then a loss.`;
      table.hidden = !n;
      status.textContent = n ? "" : `Nobody is on the leaderboard yet: a player appears here with ${needs}.`;
      status.hidden = Boolean(n);
    } catch (err) {
      if (alive) status.textContent = `The leaderboard cannot be shown: ${problemText(err)}`;
    } finally {
      loading = false;
      refresh.disabled = more.disabled = false;
    }
  }

  function row(p) {
    const mine = currentPlayer()?.id === p.id;
    return h(
      `tr${mine ? ".me" : ""}`,
      { dataset: { id: p.id } },
      h("td.rank", {}, String(p.rank)),
      h("td.name", {}, h("a", { href: `#/players/${p.id}` }, p.name), mine ? h("span.tag", {}, "You") : null),
      h("td.num.rating", { title: `deviation ± ${rounded(p.deviation)}` }, rounded(p.rating)),
      h("td.num", {}, String(p.matches)),
      h("td.num", {}, String(p.wins)),
    );
  }

  return () => {
    alive = false;
  };
}
