// The match before and instead of play: waiting for the friend to join (the invite
// link, Copy, Share, Cancel the match), and a match called off.  `T` is the table
// context (table.js).

import { act } from "./table-live.js";
import { clockText, copyField, endText, h, matchLength, toast } from "./ui.js";

export function waitingPanel(T, v, names) {
  const { S, entry } = T;
  const invite = entry.invite;
  const abort = v.legal_actions.find((a) => a.type === "abort");
  let link;
  if (invite) {
    const url = inviteLink(T.id, invite);
    const input = h("input#invite-url", { type: "text", readonly: true, value: url, "aria-label": "Invite link", onfocus: (e) => e.target.select() });
    const copy = h("button.primary#copy", { type: "button", onclick: () => copyField(input, "Link copied: send it to your friend.") }, "Copy");
    const share = navigator.share ? h("button#share", { type: "button", onclick: () => shareLink(url, names[v.seat]) }, "Share") : null;
    link = h(
      "div.invite",
      {},
      h("label", { for: "invite-url" }, "Send this link to your friend:"),
      h("div.invite-row", {}, input, h("div.invite-buttons", {}, copy, share)),
    );
  } else {
    link = h("p#no-invite", {}, "The invite link was shown when the match was made and is not kept in this browser.", entry.public ? " The match is listed in the lobby." : "");
  }
  return h(
    "section.panel.waiting-panel#waiting-panel",
    {},
    h("h1", {}, "Play a friend"),
    h("p.hint", {}, `${v.rules.preset} · ${matchLength(v.rules)} · ${clockText(v.rules.turn_seconds)}${entry.public ? " · listed in the lobby" : ""}`),
    link,
    h("p.waiting#waiting", { role: "status" }, h("span.spinner", { "aria-hidden": "true" }), "Waiting for your friend…"),
    h("p.hint", {}, `The table opens by itself when they join. You may leave this page: the match stays in ${T.bySeat ? "the Continue list of the new-match page" : "My games"}.`),
    h("div.actions", {}, abort ? h("button#cancel", { type: "button", disabled: S.busy, onclick: () => act(T, abort, { retry: true }) }, "Cancel the match") : null),
  );
}

// The invite link: the join page at this page's own address, as the person reached it
// (the service's link names the Host it was asked with, which behind a proxy may be
// "localhost"); the service's link only where this page is on a loopback address,
// which a friend's device cannot reach, and the service names another
// (GIN_RUMMY_PUBLIC_URL).
export function inviteLink(id, invite) {
  const loopback = (host) => host === "localhost" || host === "[::1]" || host.startsWith("127.");
  let theirs = null;
  try {
    theirs = new URL(invite.url).hostname;
  } catch {
    // no link of the service's: this page's own
  }
  if (theirs && loopback(location.hostname) && !loopback(theirs)) return invite.url;
  return `${location.origin}${location.pathname}#/join/${id}/${invite.code}`;
}

async function shareLink(url, name) {
  try {
    await navigator.share({ title: "Gin Rummy", text: `${name} invites you to a game of Gin Rummy`, url });
  } catch (err) {
    if (err && err.name !== "AbortError") toast("Could not share the link: copy it instead.", "error");
  }
}

export function abortedPanel() {
  return h(
    "section.panel#aborted",
    {},
    h("h1", {}, "Match called off"),
    h("p", {}, endText("aborted")),
    h("div.actions", {}, h("a.button.primary", { href: "#/" }, "New match"), h("a.button", { href: "#/lobby" }, "Lobby")),
  );
}
