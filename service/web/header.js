// The header's player part: who this browser plays as (a link to the profile), or the
// way to become a player; and the count of the player's games waiting for them, next to
// "My games".  The count is asked for when the page opens, when the screen changes (at
// most every 10 s), every 60 s while the page is visible, and when a screen that knows
// it better (My games, the table after a move) says so.
//
// While a player is here, the page follows the player's own feed (one stream for every
// match, GET /players/me/stream): each notification refreshes the count, and one about
// a match not on the screen -- your move, an opponent found, your invite accepted, a
// rematch offered, a deadline near -- is said in a toast.  It starts after the newest
// notification already there (the past is not told again).

import { ApiError, api, followNotifications } from "./api.js";
import { PLAYER_CHANGED, currentPlayer, renamePlayer } from "./saved.js";
import { h, toast } from "./ui.js";

const chip = document.getElementById("nav-player");
const gamesLink = document.getElementById("nav-games");
const count = document.getElementById("games-count");

let asked = 0; // when the count was last asked for
let refused = null; // the player token was refused: the problem
let timer = null;

function show() {
  const me = currentPlayer();
  gamesLink.hidden = !me;
  if (!me) {
    chip.replaceChildren("Continue as a guest");
    chip.classList.remove("signed-in", "refused");
    chip.removeAttribute("aria-label");
    chip.title = "Become a player: your games on every device";
    setCount(0);
    return;
  }
  chip.classList.add("signed-in");
  chip.classList.toggle("refused", Boolean(refused));
  chip.replaceChildren(h("span.avatar", { "aria-hidden": "true" }, initial(me.name)), h("span.name", {}, me.name));
  chip.setAttribute("aria-label", refused ? `${me.name}: this player's token is refused` : `Your profile: ${me.name}`);
  chip.title = refused ? refused : "Your profile";
}

const initial = (name) => [...(name || "?").trim()][0]?.toUpperCase() || "?";

// The number of games waiting for the player's move.
export function setCount(n, more = false) {
  count.hidden = !n;
  count.replaceChildren(`${n}${more ? "+" : ""}`, h("span.sr-only", {}, ` waiting for you`));
  gamesLink.classList.toggle("has-turns", n > 0);
}

// Ask the service: the player (renamed on another device? still valid?) and the count
// (`countOnly`: just the count).
async function refreshHeader({ force = false, countOnly = false } = {}) {
  const me = currentPlayer();
  if (!me || document.hidden) return;
  if (!force && Date.now() - asked < 10_000) return;
  asked = Date.now();
  try {
    const [player, page] = await Promise.all([countOnly ? null : api.me(me.token), api.myMatches(me.token, { status: "active", limit: 100 })]);
    if (currentPlayer()?.token !== me.token) return; // signed out or switched meanwhile
    refused = null;
    if (player && player.name !== me.name) renamePlayer(player.name);
    show();
    setCount(page.items.filter((m) => m.your_turn).length, Boolean(page.next_cursor));
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      refused = `This browser's player token is refused: ${err.message}`;
      show();
    }
  }
}

// Soon, after the table saw the turn change: the service has the new turn already.
export function countChanged() {
  clearTimeout(timer);
  timer = setTimeout(() => refreshHeader({ force: true, countOnly: true }), 500);
}

// What a notification says, for a match not on the screen (null: nothing to say).
function told(note) {
  const against = note.opponent ? ` against ${note.opponent}` : "";
  switch (note.kind) {
    case "your_move": return "It is your move in another match.";
    case "match_found": return `An opponent was found${against}.`;
    case "invite_accepted": return `Your invite was accepted${against}.`;
    case "rematch_offered": return `A rematch is offered${against}.`;
    case "reminder": return "A deadline of yours is near, in another match.";
    default: return null;
  }
}

const onScreen = () => (location.hash.match(/^#\/play\/([0-9a-f-]+)/) || [])[1];

let stopFeed = null;

// Follow the player's feed from its newest notification (the pages before it skipped).
async function followFeed(token) {
  if (stopFeed) stopFeed();
  stopFeed = null;
  if (!token) return;
  let after = 0;
  try {
    for (;;) {
      const page = await api.notifications(token, after, 500);
      if (page.items.length) after = Number(page.items[page.items.length - 1].id);
      if (page.items.length < 500) break; // the last page
    }
  } catch {
    return; // a refused token: the header says so
  }
  if (currentPlayer()?.token !== token) return;
  stopFeed = followNotifications(token, after, (note) => {
    countChanged();
    const message = note.match !== onScreen() ? told(note) : null;
    if (message) toast(message);
  });
}

export function startHeader() {
  show();
  refreshHeader({ force: true });
  let token = currentPlayer()?.token;
  followFeed(token);
  window.addEventListener(PLAYER_CHANGED, () => {
    const now = currentPlayer()?.token;
    if (now !== token) refused = null;
    show(); // a new name, or another player
    if (now !== token) {
      refreshHeader({ force: true });
      followFeed(now);
    }
    token = now;
  });
  window.addEventListener("hashchange", () => refreshHeader());
  document.addEventListener("visibilitychange", () => refreshHeader());
  setInterval(() => refreshHeader({ force: true }), 60_000);
}

export const playerRefused = () => refused;
