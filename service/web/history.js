// History: the matches this browser holds a seat token of (GET /matches answers a seat
// token with its own match only, so one request per match), with export and import.

import { api } from "./api.js";
import { anyToken, currentPlayer, forgetMatch, saveMatch, savedMatches, seatsOf } from "./saved.js";
import { downloadText, h, problemText, seatLabel, toast } from "./ui.js";

export function mountHistory(root) {
  const list = h("ul.history#history-list");
  const status = h("p.hint#history-status", {}, "Loading…");
  const file = h("input#import-file", { type: "file", accept: "application/json,.json", onchange: importFile });
  root.append(
    h(
      "section.panel.history-panel",
      {},
      h("h1", {}, "History"),
      h("p.hint", {}, "The matches this browser created or imported. A match's seat token is kept only here: forget it and the match cannot be opened again from this browser."),
      currentPlayer() ? h("p.hint#history-player", {}, "The matches you play as ", h("b", {}, currentPlayer().name), " are in ", h("a", { href: "#/games" }, "My games"), ".") : null,
      h("div.import", {}, h("label.button", { for: "import-file" }, "Import a record…"), file),
      status,
      list,
    ),
  );
  let alive = true;
  load();

  async function load() {
    // A player's matches (no seat token kept here) are listed in My games.
    const entries = Object.entries(savedMatches()).filter(([, e]) => seatsOf(e).length).sort((a, b) => (b[1].created || "").localeCompare(a[1].created || ""));
    if (!entries.length) {
      status.textContent = "No matches yet: start one, or import a record.";
      list.replaceChildren();
      return;
    }
    const rows = await Promise.all(
      entries.map(async ([id, entry]) => {
        try {
          return { id, entry, summary: await api.summary(anyToken(entry)) };
        } catch (err) {
          return { id, entry, error: err };
        }
      }),
    );
    if (!alive) return;
    status.textContent = `${rows.length} match${rows.length === 1 ? "" : "es"}`;
    list.replaceChildren(...rows.map(row));
  }

  function row({ id, entry, summary, error }) {
    const forget = h("button.link", {
      type: "button",
      onclick: () => {
        if (!confirm("Forget this match? Its seat token is deleted from this browser.")) return;
        forgetMatch(id);
        load();
      },
    }, "Forget");
    if (error || !summary) {
      return h("li.match.unavailable", { dataset: { id } }, h("div", {}, h("b", {}, "Unavailable match"), ` ${id.slice(0, 8)}…: `, error ? problemText(error) : "not found"), h("div.row-actions", {}, forget));
    }
    const s = summary;
    const label = s.seats.map(seatLabel).join(" vs ");
    const when = new Date(s.created_at).toLocaleString();
    const finished = s.status === "finished";
    const names = s.seats.map((x) => x.name);
    let outcome;
    if (s.status === "waiting") outcome = "waiting for a player to join";
    else if (!finished) outcome = `in progress, hand ${s.hand_number}, ${s.scores.join("–")}`;
    else if (s.end_reason === "aborted") outcome = "called off";
    else if (s.end_reason === "resigned") outcome = `${names[1 - s.winner]} resigned: ${names[s.winner]} won`;
    else if (s.end_reason === "timeout") outcome = `${names[1 - s.winner]} ran out of time: ${names[s.winner]} won`;
    else outcome = s.winner === null ? "finished" : `${s.seats[s.winner].name} won ${s.scores[s.winner]}–${s.scores[1 - s.winner]}`;
    const exportButton = h("button.export", { type: "button", disabled: !finished, title: finished ? "" : "Records can be exported once the match is finished", onclick: () => exportOne(id, entry) }, "Export");
    return h(
      "li.match",
      { dataset: { id, status: s.status } },
      h("div.what", {}, h("b", {}, label), h("span.hint", {}, ` · ${s.preset}${entry.imported ? " · imported" : ""}`)),
      h("div.when", {}, `${when} · ${outcome}`),
      h(
        "div.row-actions",
        {},
        h("a.button", { href: `#/play/${id}` }, finished ? "Final table" : s.status === "waiting" ? "Invite" : "Continue"),
        s.hand_number > 0 ? h("a.button.replay", { href: `#/replay/${id}/1` }, "Replay hands") : null,
        exportButton,
        forget,
      ),
    );
  }

  async function exportOne(id, entry) {
    try {
      downloadText(`gin-rummy-${id}.json`, await api.exportRecord(id, anyToken(entry)));
    } catch (err) {
      toast(problemText(err), "error");
    }
  }

  async function importFile() {
    const chosen = file.files[0];
    if (!chosen) return;
    file.value = "";
    let text;
    try {
      text = await chosen.text();
      JSON.parse(text);
    } catch {
      toast(`${chosen.name} is not a JSON file`, "error");
      return;
    }
    try {
      const { status: code, body } = await api.importRecord(text);
      const tokens = {};
      for (const seat of body.seats) if (seat.token) tokens[seat.seat] = seat.token;
      const known = savedMatches()[body.id];
      if (Object.keys(tokens).length) {
        saveMatch(body.id, { tokens, mode: Object.keys(tokens).length === 2 ? "hotseat" : "computer", imported: true, created: new Date().toISOString(), resultSeen: 0 });
        toast(`Imported: ${body.status === "finished" ? "a finished" : "an unfinished"} match (${body.version} events).`);
      } else if (known) {
        toast("This match is already here.");
      } else {
        // 200: the service already holds this match, and answers a repeated import without tokens.
        toast(`This service already holds match ${body.id.slice(0, 8)}…, and a repeated import grants no seat token: it cannot be opened from this browser.`, "error");
      }
      if (code === 201 || known) load();
    } catch (err) {
      // The service's detail names the event it refuses (events[3] (seq 4), or its path
      // events/3/...): named once, unless it does not.
      const p = err.problem || {};
      const named = p.index === undefined || [`events[${p.index}]`, `events/${p.index}`].some((x) => (p.detail || "").includes(x));
      toast(`Import refused: ${problemText(err)}${named ? "" : ` (event seq ${p.seq})`}`, "error");
    }
  }

  return () => {
    alive = false;
  };
}
