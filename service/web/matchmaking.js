// "Play someone now": a matchmaking ticket with the player's choices, a waiting state
// (polled every few seconds: a live ticket not polled for 30 s lapses) with Cancel, and
// the table opened by itself once the ticket is paired.  The ticket's id is kept in
// this tab (sessionStorage), so a reload keeps waiting on the same ticket.

import { api } from "./api.js";
import { currentPlayer, saveMatch } from "./saved.js";
import { h, problemText, toast } from "./ui.js";

const WAITING = "gin-rummy:ticket";
const POLL_MS = 3000;

export function mountPlayNow(root) {
  const me = currentPlayer();
  if (!me) {
    root.append(
      h(
        "section.panel.play-now",
        {},
        h("h1", {}, "Play someone now"),
        h("p#play-now-needs-player", {}, "Matchmaking pairs players: ", h("a", { href: "#/profile" }, "continue as a guest"), " (or sign in) first."),
      ),
    );
    return () => {};
  }
  const kind = h("select#mm-kind", { name: "kind" }, h("option", { value: "live" }, "Live: play now"), h("option", { value: "correspondence" }, "By correspondence"));
  const turn = h("select#mm-turn", { name: "turn_seconds" }, [15, 30, 60].map((s) => h("option", { value: String(s) }, `${s} seconds a turn`)));
  turn.value = "30";
  const days = h("select#mm-days", { name: "days_per_move", hidden: true }, [1, 3, 7].map((d) => h("option", { value: String(d) }, `${d} day${d === 1 ? "" : "s"} a move`)));
  days.value = "3";
  const length = h("select#mm-length", { name: "length" }, h("option", { value: "single" }, "One hand"), h("option", { value: "match" }, "To 100 points"));
  const rated = h("input#mm-rated", { type: "checkbox", name: "rated", checked: true });
  const find = h("button.primary#mm-find", { type: "submit" }, "Find an opponent");
  const form = h(
    "form#mm-form",
    { onsubmit: (event) => { event.preventDefault(); post(); } },
    h("label.field", {}, "Clock ", kind),
    h("label.field", {}, "Time ", turn, days),
    h("label.field", {}, "Length ", length),
    h("label.field", {}, rated, " Rated"),
    find,
  );
  const status = h("p#mm-status", { role: "status" });
  const cancel = h("button#mm-cancel", { type: "button", onclick: () => stop() }, "Cancel");
  const waiting = h("div#mm-waiting", { hidden: true }, h("p.waiting", {}, "Looking for an opponent…"), status, cancel);
  kind.addEventListener("change", () => {
    turn.hidden = kind.value !== "live";
    days.hidden = kind.value === "live";
  });
  root.append(
    h(
      "section.panel.play-now",
      {},
      h("h1", {}, "Play someone now"),
      h("p.hint", {}, `Paired with another player of a rating near ${me.name}'s, under the same choices.`),
      form,
      waiting,
    ),
  );
  let alive = true;
  let timer = null;
  let ticketId = sessionStorage.getItem(WAITING);
  if (ticketId) poll();

  function body() {
    const chosen = { kind: kind.value, single_hand: length.value === "single", rated: rated.checked };
    if (kind.value === "live") chosen.turn_seconds = Number(turn.value);
    else chosen.days_per_move = Number(days.value);
    return chosen;
  }

  async function post() {
    find.disabled = true;
    try {
      show(await api.postTicket(me.token, body()));
    } catch (err) {
      if (err.code === "ticket_open" && err.problem.ticket_id) {
        ticketId = err.problem.ticket_id;
        poll();
      } else toast(problemText(err), "error");
    } finally {
      find.disabled = false;
    }
  }

  async function poll() {
    if (!alive || !ticketId) return;
    try {
      show(await api.ticket(me.token, ticketId));
    } catch (err) {
      if (!alive) return;
      if (err.status === 404) return reset();
      status.textContent = `Still looking (${problemText(err)})`;
      timer = setTimeout(poll, POLL_MS);
    }
  }

  function show(ticket) {
    if (!alive) return;
    ticketId = ticket.id;
    if (ticket.status === "paired") {
      sessionStorage.removeItem(WAITING);
      saveMatch(ticket.match.id, { player: me.id, mode: "online", joined: true, created: new Date().toISOString(), resultSeen: 0 });
      location.hash = `#/play/${ticket.match.id}`;
      return;
    }
    if (ticket.status !== "waiting") {
      toast(ticket.status === "lapsed" ? "The search stopped: ask again." : "Search cancelled.");
      return reset();
    }
    sessionStorage.setItem(WAITING, ticket.id);
    form.hidden = true;
    waiting.hidden = false;
    const range = ticket.rating_range;
    status.textContent = `Your rating ${Math.round(ticket.rating)}; opponents from ${Math.round(range.low)} to ${Math.round(range.high)} (widening while you wait).`;
    clearTimeout(timer);
    timer = setTimeout(poll, POLL_MS);
  }

  async function stop() {
    clearTimeout(timer);
    cancel.disabled = true;
    try {
      show(await api.cancelTicket(me.token, ticketId));
    } catch (err) {
      if (err.code === "ticket_paired") return poll(); // found just now: open the table
      toast(problemText(err), "error");
    } finally {
      cancel.disabled = false;
    }
  }

  function reset() {
    clearTimeout(timer);
    sessionStorage.removeItem(WAITING);
    ticketId = null;
    form.hidden = false;
    waiting.hidden = true;
  }

  return () => {
    alive = false;
    clearTimeout(timer);
  };
}
