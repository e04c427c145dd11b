// The lobby: the public matches waiting for a player (GET /lobby, newest first, in
// pages), each joined with one click, under the name at the top (a browser that has
// none is offered one).

import { api, serverNow } from "./api.js";
import { defaultName, joinMatch, joinProblem, someName } from "./join.js";
import { currentPlayer, holds, savedMatch } from "./saved.js";
import { agoText, clockText, h, matchLength, problemText, toast } from "./ui.js";

export function mountLobby(root) {
  const me = currentPlayer();
  const name = h("input#lobby-name", { name: "name", value: defaultName() || someName(), maxlength: "40", autocomplete: "nickname", placeholder: "Your name" });
  const list = h("ul.lobby#lobby-list");
  const status = h("p.hint#lobby-status", { role: "status" }, "Loading…");
  const more = h("button#lobby-more", { type: "button", hidden: true, onclick: () => load(cursor) }, "More");
  const refresh = h("button#lobby-refresh", { type: "button", onclick: () => load(null) }, "Refresh");
  root.append(
    h(
      "section.panel.lobby-panel",
      {},
      h("div.title-row", {}, h("h1", {}, "Lobby"), refresh),
      h("p.hint", {}, "Public matches waiting for a player. To list one of your own: New match → A friend on another device → List it in the lobby."),
      me ? h("p#lobby-as", {}, "You join as ", h("b", {}, me.name), ".") : h("label.field", {}, "Your name ", name),
      status,
      list,
      more,
    ),
  );
  let cursor = null;
  let alive = true;
  let loading = false;
  let ours = new Set(); // the player's own matches waiting (made on any device)
  load(null);

  async function load(after) {
    if (loading) return;
    loading = true;
    refresh.disabled = more.disabled = true;
    try {
      const [page, waiting] = await Promise.all([
        api.lobby(after),
        me && !after ? api.myMatches(me.token, { status: "waiting", limit: 100 }).catch(() => null) : null,
      ]);
      if (waiting) ours = new Set(waiting.items.map((m) => m.id));
      if (!alive) return;
      if (!after) list.replaceChildren();
      list.append(...page.items.map(row));
      cursor = page.next_cursor;
      more.hidden = !cursor;
      const n = list.children.length;
      status.textContent = n ? `${n} match${n === 1 ? "" : "es"} waiting${cursor ? " (more below)" : ""}` : "No public match is waiting just now.";
    } catch (err) {
      if (alive) status.textContent = `The lobby cannot be shown: ${problemText(err)}`;
    } finally {
      loading = false;
      refresh.disabled = more.disabled = false;
    }
  }

  function row(item) {
    const mine = holds(savedMatch(item.id)) || ours.has(item.id);
    const rules = item.rules;
    const action = mine
      ? h("a.button#lobby-open", { href: `#/play/${item.id}` }, "Yours: open")
      : h("button.primary.join", { type: "button", onclick: (event) => join(item, event.currentTarget) }, "Join");
    return h(
      "li.lobby-entry",
      { dataset: { id: item.id } },
      h(
        "div.what",
        {},
        h("b.creator", {}, item.creator),
        h("span.rules", {}, ` · ${rules.preset} · ${matchLength(rules)} · ${clockText(rules.turn_seconds)}`),
        h("div.when.hint", {}, `made ${agoText(item.created_at, serverNow())}`),
      ),
      h("div.row-actions", {}, action),
    );
  }

  async function join(item, button) {
    const chosen = name.value.trim();
    if (!chosen && !me) {
      toast("Your name first: the other player sees it.");
      name.focus();
      return;
    }
    button.disabled = true;
    try {
      const matchId = await joinMatch(item.id, null, chosen);
      location.hash = `#/play/${matchId}`;
    } catch (err) {
      const { text, final } = joinProblem(err);
      toast(text, "error");
      if (final) load(null);
      else button.disabled = false;
    }
  }

  return () => {
    alive = false;
  };
}
