// Players: becoming one (a guest: a name, POST /players), the profile (rename, the
// rating, the secret link that signs another device in, signing out), signing in from
// that link or a pasted token (#/signin/<token>), and anyone's public profile.
//
// The player token is the key to every match of the player: it is shown only when asked
// for, and the sign-in link is taken out of the address bar as soon as it is read.

import { ApiError, api } from "./api.js";
import { playerRefused } from "./header.js";
import { currentPlayer, forgetPlayer, pref, renamePlayer, savePlayer } from "./saved.js";
import { copyField, fieldProblem, go, h, plural, problemText, rounded, toast } from "./ui.js";

// #/profile: the player's own profile, or the way to become one.
export function mountProfile(root) {
  const me = currentPlayer();
  if (!me) return mountBecome(root);
  let alive = true;
  const stats = h("dl.stats#profile-stats", {}, h("div", {}, h("dt", {}, "Rating"), h("dd", {}, "…")));
  const title = h("h1#profile-name", {}, me.name);
  const kind = h("span.tag#profile-kind", {}, "Guest");
  const problem = h("p.error#profile-error", { role: "alert", hidden: true });
  const since = h("p.hint.since#profile-since", {}, "");
  root.append(
    h(
      "section.panel.profile-panel#profile",
      {},
      h("div.title-row", {}, h("div.who", {}, title, kind)),
      since,
      problem,
      stats,
      h("p.hint", {}, "Ratings are Glicko-2: everyone starts at 1500, deviation 350. A match is rated when two players (not the computer) both make a move before it ends; resigning or running out of time is then a loss. The deviation says how sure the rating is: it shrinks as you play, and at 110 or less the rating is established (before that, provisional)."),
      h("div.actions", {}, h("a.button#open-games", { href: "#/games" }, "My games"), h("a.button#public-link", { href: `#/players/${me.id}` }, "Public profile")),
    ),
    renamePanel(me, (name) => (title.textContent = name)),
    devicePanel(me),
    signOutPanel(me),
    dataPanel(me),
  );

  api.me(me.token).then(
    (player) => {
      if (!alive) return;
      if (player.name !== me.name) renamePlayer(player.name);
      title.textContent = player.name;
      kind.textContent = player.signed_in ? "Signed in" : "Guest";
      since.textContent = `Playing since ${new Date(player.created_at).toLocaleDateString()}`;
      stats.replaceChildren(...statItems(player.rating));
    },
    (err) => {
      if (!alive) return;
      stats.hidden = true;
      problem.hidden = false;
      problem.textContent =
        err instanceof ApiError && err.status === 401
          ? `The service no longer accepts this browser's player token (${err.message}). Sign out below, then continue as a guest or use your player's link again.`
          : `The profile cannot be shown: ${problemText(err)}`;
    },
  );
  if (playerRefused()) {
    problem.hidden = false;
    problem.textContent = playerRefused();
  }

  return () => {
    alive = false;
  };
}

function statItems(r) {
  const item = (label, value, id) => h("div", {}, h("dt", {}, label), h(`dd#${id}`, {}, value));
  return [
    item("Rating", rounded(r.rating), "stat-rating"),
    item("Deviation", `± ${rounded(r.deviation)}`, "stat-deviation"),
    item("Rated matches", String(r.matches), "stat-matches"),
    item("Wins", String(r.wins), "stat-wins"),
  ];
}

function renamePanel(me, renamed) {
  const input = h("input#rename-name", { name: "name", value: me.name, maxlength: "40", required: true, autocomplete: "nickname", "aria-describedby": "rename-error" });
  const button = h("button#rename", { type: "submit" }, "Rename");
  const error = h("p.error#rename-error", { role: "alert", hidden: true });
  const form = h(
    "form.panel.rename-panel#rename-form",
    { onsubmit: submit },
    h("h2", {}, "Your name"),
    h("div.inline-form", {}, h("label.field", {}, "Name ", input), button),
    error,
    h("p.hint", {}, "The other player sees it. A new name is used for the matches you start or join from now on."),
  );

  async function submit(event) {
    event.preventDefault();
    error.hidden = true;
    button.disabled = true;
    try {
      const player = await api.rename(me.token, input.value);
      renamePlayer(player.name);
      input.value = player.name;
      renamed(player.name);
      toast(`You are ${player.name} now.`);
    } catch (err) {
      error.textContent = fieldProblem(err, "name");
      error.hidden = false;
      input.focus();
    } finally {
      button.disabled = false;
    }
  }
  return form;
}

// The link that signs another device in as this player: shown only when asked for.
function devicePanel(me) {
  const link = `${location.origin}${location.pathname}#/signin/${encodeURIComponent(me.token)}`;
  const show = h("button#show-device", { type: "button", "aria-expanded": "false", onclick: toggle }, "Show the secret link");
  const secret = h("div.secret#device-secret", { hidden: true });
  const panel = h(
    "section.panel.device-panel#device",
    {},
    h("h2", {}, "Use on another device"),
    h("p", {}, `To play as ${me.name} on your phone or another computer, open this player's secret link there, or paste it on that device's Continue as a guest page. Your games, your rating and your turns follow.`),
    h("div.actions", {}, show),
    secret,
  );

  function toggle() {
    if (!secret.hidden) {
      secret.hidden = true;
      secret.replaceChildren(); // not left in the page
      show.textContent = "Show the secret link";
      show.setAttribute("aria-expanded", "false");
      return;
    }
    const input = h("input#device-link", { type: "text", readonly: true, value: link, "aria-label": "Secret sign-in link", spellcheck: "false", onfocus: (e) => e.target.select() });
    secret.replaceChildren(
      h("p.warning", { role: "note" }, h("b", {}, "Secret: "), `anyone with this link plays as ${me.name}: they see your games and can move in them. Send it only to yourself, and never post it.`),
      h("div.invite-row", {}, input, h("div.invite-buttons", {}, h("button.primary#copy-device", { type: "button", onclick: () => copyField(input, "Link copied: open it on your other device.") }, "Copy"))),
    );
    secret.hidden = false;
    show.textContent = "Hide the link";
    show.setAttribute("aria-expanded", "true");
    input.focus();
  }
  return panel;
}

// Download everything the service holds about the player, or delete the player.
function dataPanel(me) {
  const box = h("div.actions#delete-box");
  const error = h("p.error#data-error", { role: "alert", hidden: true });
  const panel = h(
    "section.panel.data-panel#your-data",
    {},
    h("h2", {}, "Your data"),
    h("p.hint", {}, "Download everything the service holds about this player: the profile, the rating history, every match as your seat saw it, your notifications and matchmaking tickets (one JSON object per line)."),
    h("div.actions", {}, h("button#download-data", { type: "button", onclick: download }, "Download my data")),
    h("p.hint", {}, "Deleting this player removes your name from every match: your seats show a deleted player instead. The matches and their results stay, and so do your opponents' ratings; your profile, rating, notifications and tickets go, and this player's link stops working on every device. It cannot be undone."),
    box,
    error,
  );
  async function download() {
    error.hidden = true;
    try {
      const text = await api.myData(me.token);
      const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
      const a = h("a", { href: url, download: `gin-rummy-player-${me.id}.ndjson` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      error.textContent = `The download failed: ${problemText(err)}`;
      error.hidden = false;
    }
  }
  function ask() {
    box.replaceChildren(
      h(
        "div.confirm#delete-confirm",
        { role: "alertdialog", "aria-label": "Delete this player?", onkeydown: (e) => e.key === "Escape" && idle() },
        h("span", {}, `Delete ${me.name} for good? Your name leaves every match; the matches and results stay.`),
        h("button.danger#confirm-delete", { type: "button", onclick: remove }, "Delete my player"),
        h("button#cancel-delete", { type: "button", onclick: idle }, "Cancel"),
      ),
    );
    box.querySelector("#cancel-delete").focus();
  }
  function idle() {
    box.replaceChildren(h("button.danger#delete-player", { type: "button", onclick: ask }, "Delete my player…"));
  }
  async function remove() {
    error.hidden = true;
    try {
      await api.deleteMe(me.token);
      forgetPlayer();
      toast(`${me.name} is deleted: your seats now show a deleted player.`);
      go("#/profile");
    } catch (err) {
      error.textContent = `The player could not be deleted: ${problemText(err)}`;
      error.hidden = false;
      idle();
    }
  }
  idle();
  return panel;
}

function signOutPanel(me) {
  const box = h("div.actions#sign-out-box");
  const panel = h(
    "section.panel.signout-panel",
    {},
    h("h2", {}, "Sign out"),
    h("p.hint", {}, `This browser forgets ${me.name}. Your games stay yours: to come back, open the secret link above (keep a copy first: without it, this player cannot be used again).`),
    box,
  );
  function ask() {
    box.replaceChildren(
      h(
        "div.confirm#sign-out-confirm",
        { role: "alertdialog", "aria-label": "Sign out?", onkeydown: (e) => e.key === "Escape" && idle() },
        h("span", {}, `Sign out of ${me.name} in this browser?`),
        h("button.danger#confirm-sign-out", { type: "button", onclick: out }, "Sign out"),
        h("button#cancel-sign-out", { type: "button", onclick: idle }, "Cancel"),
      ),
    );
    box.querySelector("#cancel-sign-out").focus();
  }
  function idle() {
    box.replaceChildren(h("button#sign-out", { type: "button", onclick: ask }, "Sign out…"));
  }
  function out() {
    forgetPlayer();
    toast(`Signed out: this browser no longer plays as ${me.name}.`);
    go("#/profile");
  }
  idle();
  return panel;
}

// --- becoming a player -----------------------------------------------------------------

function mountBecome(root) {
  const suggested = pref("name", "");
  const name = h("input#guest-name", { name: "name", value: suggested === "You" ? "" : suggested, maxlength: "40", required: true, autocomplete: "nickname", placeholder: "Your name", "aria-describedby": "guest-error" });
  const button = h("button.primary#guest-start", { type: "submit" }, "Continue");
  const error = h("p.error#guest-error", { role: "alert", hidden: true });
  const guest = h(
    "form.panel.player-panel#guest-form",
    { onsubmit: become },
    h("h1", {}, "Continue as a guest"),
    h("p", {}, "Choose the name others see. You become a player: the matches you start or join are yours on any device where you use this player, you get a rating, and My games shows whose turn it is. No e-mail, no password."),
    h("div.inline-form", {}, h("label.field", {}, "Your name ", name), button),
    error,
  );
  const pasted = h("input#signin-token", { name: "token", type: "password", autocomplete: "off", spellcheck: "false", required: true, placeholder: "Secret link or token", "aria-describedby": "signin-error" });
  const use = h("button#signin-start", { type: "submit" }, "Use this player");
  const useError = h("p.error#signin-error", { role: "alert", hidden: true });
  const other = h(
    "form.panel.player-panel#signin-form",
    { onsubmit: paste },
    h("h2", {}, "Already a player on another device?"),
    h("p.hint", {}, "On that device, open your name (top right) → Use on another device → Show the secret link. Open that link here, or paste it below."),
    h("div.inline-form", {}, h("label.field", {}, "Secret link ", pasted), use),
    useError,
  );
  root.append(guest, other);
  name.focus();

  async function become(event) {
    event.preventDefault();
    error.hidden = true;
    button.disabled = true;
    try {
      const player = await api.createPlayer(name.value);
      savePlayer(player);
      toast(`Welcome, ${player.name}: you play as a player from now on.`);
      go("#/profile");
    } catch (err) {
      error.textContent = fieldProblem(err, "name");
      error.hidden = false;
      button.disabled = false;
      name.focus();
    }
  }

  async function paste(event) {
    event.preventDefault();
    const token = tokenIn(pasted.value);
    useError.hidden = true;
    if (!token) {
      useError.textContent = "Paste the whole secret link (or the token it ends with).";
      useError.hidden = false;
      return;
    }
    use.disabled = true;
    try {
      const player = await api.me(token);
      savePlayer({ id: player.id, name: player.name, token });
      pasted.value = "";
      toast(`This browser plays as ${player.name} now.`);
      go("#/games");
    } catch (err) {
      useError.textContent = refusal(err);
      useError.hidden = false;
    } finally {
      use.disabled = false;
    }
  }
  return () => {};
}

// The token in a pasted sign-in link (…#/signin/<token>), or the token itself.
function tokenIn(text) {
  const value = text.trim();
  const at = value.indexOf("#/signin/");
  const token = at >= 0 ? decodeURIComponent(value.slice(at + "#/signin/".length)) : value;
  return /^[\x21-\x7e]+$/.test(token) ? token : null;
}

function refusal(err) {
  if (err instanceof ApiError && err.status === 401) return "This link is not valid: check that the whole link was copied. A player signed out everywhere cannot be used again.";
  if (err instanceof ApiError && err.status === 403) return "This is not a player's link (a seat's token, perhaps).";
  return `Could not sign in: ${problemText(err)}`;
}

// --- #/signin/<token>: the secret link, opened on another device ----------------------------

export function mountSignin(root, token) {
  // Out of the address bar (and of this tab's history entry) at once.
  history.replaceState(null, "", `${location.pathname}${location.search}#/signin`);
  const panel = h("section.panel.player-panel#signin", {}, h("h1", {}, "Use a player here"), h("p.loading", {}, "Checking the link…"));
  root.append(panel);
  if (!token) {
    panel.replaceChildren(h("h1", {}, "Use a player here"), h("p", {}, "Open the secret link from your other device, or paste it on the ", h("a", { href: "#/profile" }, "Continue as a guest"), " page."));
    return () => {};
  }
  let alive = true;
  api.me(token).then(
    (player) => {
      if (!alive) return;
      const now = currentPlayer();
      if (now && now.id === player.id) {
        savePlayer({ id: player.id, name: player.name, token });
        panel.replaceChildren(h("h1", {}, `You are ${player.name}`), h("p", {}, "This browser already plays as this player."), h("div.actions", {}, h("a.button.primary", { href: "#/games" }, "My games")));
        return;
      }
      const confirm = h("button.primary#signin-confirm", { type: "button", onclick: () => use(player) }, `Play as ${player.name} here`);
      const parts = [
        h("h1", {}, `Play as ${player.name}?`),
        h("p", {}, `This link makes this browser play as ${player.name} (rating ${rounded(player.rating.rating)}, ${plural(player.rating.matches, "rated match", "rated matches")}): their games, their turns, their rating.`),
        now ? h("p.warning#signin-switch", {}, `This browser plays as ${now.name} now: ${now.name} is signed out here (keep ${now.name}'s link first, from the profile page).`) : null,
        h("p.hint", {}, "Only do this on a device of yours: whoever uses this browser plays as this player."),
        h("div.actions", {}, confirm, h("a.button#signin-cancel", { href: "#/" }, "Cancel")),
      ];
      panel.replaceChildren(...parts.filter(Boolean));
      confirm.focus();
    },
    (err) => {
      if (!alive) return;
      panel.replaceChildren(h("h1", {}, "Use a player here"), h("p.error#signin-error", { role: "alert" }, refusal(err)), h("div.actions", {}, h("a.button", { href: "#/profile" }, "Continue as a guest")));
    },
  );

  function use(player) {
    if (currentPlayer()) forgetPlayer();
    savePlayer({ id: player.id, name: player.name, token });
    toast(`This browser plays as ${player.name} now.`);
    go("#/games");
  }

  return () => {
    alive = false;
  };
}

// --- #/players/<id>: anyone's profile ------------------------------------------------------

export function mountPublicProfile(root, id) {
  const panel = h("section.panel.profile-panel#public-profile", {}, h("h1", {}, "Player"), h("p.loading", {}, "Loading…"));
  root.append(panel);
  let alive = true;
  api.profile(id).then(
    (p) => {
      if (!alive) return;
      const mine = currentPlayer()?.id === p.id;
      const parts = [
        h("div.title-row", {}, h("div.who", {}, h("h1#player-name", {}, p.name), mine ? h("span.tag", {}, "You") : null)),
        h("dl.stats#player-stats", {}, statItems(p)),
        p.matches ? null : h("p.hint", {}, `${p.name} has played no rated match yet.`),
        h("div.actions", {}, h("a.button", { href: "#/leaderboard" }, "Leaderboard"), mine ? h("a.button", { href: "#/profile" }, "Your profile") : null),
      ];
      panel.replaceChildren(...parts.filter(Boolean));
    },
    (err) => {
      if (!alive) return;
      const text = err instanceof ApiError && err.status === 404 ? "There is no such player: the link may be incomplete." : `This profile cannot be shown: ${problemText(err)}`;
      panel.replaceChildren(h("h1", {}, "Player"), h("p.error", { role: "alert" }, text), h("div.actions", {}, h("a.button", { href: "#/leaderboard" }, "Leaderboard")));
    },
  );
  return () => {
    alive = false;
  };
}
