// Joining a match someone made for a player on another device: from an invite link
// (#/join/<id>/<code>) or from the lobby (a public match: #/join/<id>, no code).

import { ApiError, api } from "./api.js";
import { currentPlayer, holds, pref, saveMatch, savedMatch, setPref } from "./saved.js";
import { h, problemText } from "./ui.js";

// The name this browser offers by default ("You" is the default of the new-match form,
// and a name the other player would read as themselves).
export function defaultName() {
  const name = pref("name", "");
  return name === "You" ? "" : name;
}

// A name for a browser that has none yet, so that a match in the lobby is joined with
// one click: "Player" and four digits, kept once joined (then offered again, and
// changed in any name field).
export const someName = () => `Player ${1000 + Math.floor(Math.random() * 9000)}`;

// Take the open seat; keeps the seat token (a player keeps none: the player token opens
// the match, under the player's name); answers the match id.
export async function joinMatch(id, code, name) {
  const me = currentPlayer();
  if (me) {
    const joined = await api.join(id, code, undefined, me.token);
    saveMatch(joined.match_id, { player: me.id, mode: "online", joined: true, created: new Date().toISOString(), resultSeen: 0 });
    return joined.match_id;
  }
  const joined = await api.join(id, code, name);
  saveMatch(joined.match_id, {
    tokens: { [joined.seat]: joined.token },
    mode: "online",
    joined: true,
    created: new Date().toISOString(),
    resultSeen: 0,
  });
  setPref("name", name);
  return joined.match_id;
}

// A refusal, for people: { text, final } (final: trying again cannot help).
export function joinProblem(err) {
  const code = err instanceof ApiError ? err.code : null;
  if (code === "invalid_invite") return { text: "This invite link is not valid: check that the whole link was copied, or ask for it again.", final: true };
  if (code === "invite_required") return { text: "This match is joined with its invite link: ask the player who made it for the link.", final: true };
  if (code === "seat_taken") return { text: "This match is no longer open: someone else took the seat, or it was called off.", final: true };
  if (code === "match_not_found") return { text: "There is no such match: the link may be incomplete, or the match was removed.", final: true };
  if (err instanceof ApiError && err.status === 422) {
    const errors = err.problem.errors || {};
    return { text: errors.name ? `Your name: ${[].concat(errors.name).join(" ")}` : problemText(err), final: false };
  }
  return { text: `Could not join: ${problemText(err)}`, final: false };
}

function knownPanel(id, why) {
  return h(
    "section.panel.join-panel#join-known",
    {},
    h("h1", {}, "You are in this match"),
    h("p", {}, why),
    h("div.actions", {}, h("a.button.primary#open-table", { href: `#/play/${id}` }, "Open the table")),
  );
}

export function mountJoin(root, id, code) {
  const entry = savedMatch(id);
  const me = currentPlayer();
  if (holds(entry)) {
    root.append(knownPanel(id, "This browser already holds a seat of this match: the invite link is for the other player."));
    return () => {};
  }
  let alive = true;
  if (me) {
    // The player may have made this match on another device: joining would seat them
    // on both seats.  The player token reads the match only if it holds a seat.
    const form = joinForm(root, id, code, me);
    form.hidden = true;
    api.view(id, me.token).then(
      () => {
        if (!alive) return;
        form.remove();
        root.append(knownPanel(id, `${me.name} already plays in this match (made on another device, perhaps): the invite link is for the other player.`));
      },
      () => {
        if (!alive) return;
        form.hidden = false;
        form.querySelector("#join")?.focus();
      },
    );
  } else {
    joinForm(root, id, code, null);
  }
  return () => {
    alive = false;
  };
}

function joinForm(root, id, code, me) {
  const name = h("input#join-name", { name: "name", value: defaultName(), maxlength: "40", required: true, autocomplete: "nickname", placeholder: "Your name" });
  const button = h("button.primary#join", { type: "submit" }, "Join");
  const error = h("p.error#join-error", { role: "alert", hidden: true });
  const links = h("div.actions#join-links", { hidden: true }, h("a.button", { href: "#/lobby" }, "Lobby"), h("a.button", { href: "#/" }, "New match"));
  const form = h(
    "form.panel.join-panel#join-form",
    { onsubmit: submit },
    h("h1", {}, "Join a match"),
    h("p", {}, code ? "You are invited to a game of Gin Rummy against a friend." : "A match from the lobby: someone is waiting for a player."),
    me ? h("p#join-as", {}, "You join as ", h("b", {}, me.name), ": the match is in My games on every device where you use this player.") : null,
    me ? null : h("label.field", {}, "Your name ", name),
    me ? null : h("p.hint", {}, "The other player sees this name."),
    h("div.actions", {}, button),
    error,
    links,
  );
  root.append(form);
  if (!me) name.focus();

  async function submit(event) {
    event.preventDefault();
    const chosen = name.value.trim();
    if (!chosen && !me) {
      name.focus();
      return;
    }
    button.disabled = true;
    error.hidden = true;
    try {
      const matchId = await joinMatch(id, code, chosen);
      location.hash = `#/play/${matchId}`;
    } catch (err) {
      const { text, final } = joinProblem(err);
      error.textContent = text;
      error.hidden = false;
      links.hidden = !final;
      button.disabled = final;
      name.disabled = final;
    }
  }

  return form;
}
