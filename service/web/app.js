// The reference client: a hash router over its screens.
//   #/                    new match (and the matches to continue)
//   #/play/<id>           the table (also the invite, while the match waits for a friend)
//   #/join/<id>/<code>    join a match from its invite link (#/join/<id>: a public one)
//   #/lobby               the public matches waiting for a player
//   #/play-now            "Play someone now": matchmaking
//   #/history             past matches, export and import
//   #/replay/<id>/<hand>  the hand replay viewer
//   #/games               the player's matches ("My games")
//   #/profile             the player's profile (or becoming one: continue as a guest)
//   #/signin/<token>      a player's secret link, opened on another device
//   #/players/<id>        anyone's public profile
//   #/leaderboard         the best rated players

import { api } from "./api.js";
import { mountGames } from "./games.js";
import { startHeader } from "./header.js";
import { mountHistory } from "./history.js";
import { mountJoin } from "./join.js";
import { mountLeaderboard } from "./leaderboard.js";
import { mountLobby } from "./lobby.js";
import { mountPlayNow } from "./matchmaking.js";
import { mountProfile, mountPublicProfile, mountSignin } from "./profile.js";
import { mountReplay } from "./replay.js";
import { currentPlayer, pref, saveMatch, savedMatches, setPref } from "./saved.js";
import { mountTable } from "./table.js";
import { h, problemText, toast } from "./ui.js";

const screen = document.getElementById("screen");
let unmount = null;

function route() {
  if (unmount) unmount();
  unmount = null;
  screen.replaceChildren();
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  document.body.dataset.screen = parts[0] || "new";
  if (parts[0] === "play" && parts[1]) unmount = mountTable(screen, parts[1]);
  else if (parts[0] === "join" && parts[1]) unmount = mountJoin(screen, parts[1], parts[2] ? decodeURIComponent(parts[2]) : null);
  else if (parts[0] === "lobby") unmount = mountLobby(screen);
  else if (parts[0] === "play-now") unmount = mountPlayNow(screen);
  else if (parts[0] === "history") unmount = mountHistory(screen);
  else if (parts[0] === "replay" && parts[1]) unmount = mountReplay(screen, parts[1], Number(parts[2] || 1));
  else if (parts[0] === "games") unmount = mountGames(screen);
  else if (parts[0] === "profile") unmount = mountProfile(screen);
  else if (parts[0] === "signin") unmount = mountSignin(screen, parts[1] ? decodeURIComponent(parts[1]) : null);
  else if (parts[0] === "players" && parts[1]) unmount = mountPublicProfile(screen, decodeURIComponent(parts[1]));
  else if (parts[0] === "leaderboard") unmount = mountLeaderboard(screen);
  else unmount = mountNewMatch(screen);
  for (const link of document.querySelectorAll(".topbar nav a, #nav-player")) {
    if (link.getAttribute("href") === `#/${parts[0] || ""}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  window.scrollTo(0, 0);
}

window.addEventListener("hashchange", route);
startHeader();
route();

// --- New match ---------------------------------------------------------------------

function mountNewMatch(root) {
  const me = currentPlayer();
  const presetSelect = h("select#preset", { name: "preset" });
  const presetInfo = h("p.hint#preset-info");
  const target = h("span#target", {}, "100");
  const levelSelect = h(
    "select#level",
    { name: "level" },
    ["easy", "medium", "hard"].map((l) => h("option", { value: l }, l[0].toUpperCase() + l.slice(1))),
  );
  levelSelect.value = pref("level", "medium");
  const name1 = h("input#name1", { name: "name1", value: pref("name", "You"), maxlength: "40", required: true, autocomplete: "nickname" });
  const name1Field = h("label.field#name1-field", {}, "Your name ", name1);
  // A player plays under the player's name (and the match is theirs on every device);
  // two people on one device keep seat tokens here, under the names given.
  const asPlayer = me
    ? h("p.as-player#as-player", {}, "You play as ", h("b", {}, me.name), ": the match is in ", h("a", { href: "#/games" }, "My games"), " on every device where you use this player.")
    : null;
  const hotseatNote = me ? h("p.hint#hotseat-note", {}, "Two people on this device: the match is kept in this browser only (History), not in My games, and is not rated.") : null;
  const name2 = h("input#name2", { name: "name2", value: "", maxlength: "40", required: true });
  const start = h("button.primary#start", { type: "submit" }, "Deal");
  const publicBox = h("input#public", { type: "checkbox", name: "public", checked: Boolean(pref("public", false)) });
  const clockSelect = h(
    "select#clock",
    { name: "clock" },
    [["none", "No clock"], ["30", "30 seconds per turn"], ["259200", "3 days per turn"]].map(([value, label]) => h("option", { value }, label)),
  );
  clockSelect.value = pref("clock", "none");
  // The rules' starter: who starts each hand after the first (seat 0, the first player, starts that one).
  const starterSelect = h(
    "select#starter",
    { name: "starter" },
    [["alternate", "Take turns"], ["seat_0", "The first player, every hand"], ["loser", "The loser of the last hand"]].map(([value, label]) =>
      h("option", { value }, label),
    ),
  );
  starterSelect.value = pref("starter", "alternate");
  const starterField = h("label.field#starter-field", {}, "Who starts each hand ", starterSelect);
  // Variations beyond the preset: Big Gin, and the match bonuses (a game bonus, a box
  // for each hand won, the shutout doubled).  Each starts as the preset has it, and is
  // sent only when changed.
  const bigGinBox = h("input#big-gin", { type: "checkbox", name: "big_gin" });
  const bigGinText = h("span#big-gin-text", {}, "Big Gin");
  const bonusesBox = h("input#match-bonuses", { type: "checkbox", name: "match_bonuses" });
  const bonusesText = h("span#match-bonuses-text", {}, "Match bonuses");
  const variations = h(
    "fieldset#variations",
    {},
    h("legend", {}, "Variations"),
    h("label.choice", {}, bigGinBox, " ", bigGinText),
    h("label.choice#match-bonuses-field", {}, bonusesBox, " ", bonusesText),
  );
  const friendOptions = h(
    "div.suboptions#friend-options",
    {},
    h("label.choice", {}, publicBox, " List it in the lobby: anyone may join"),
    h("label.field", {}, "Clock ", clockSelect),
    h("p.hint", {}, "You get a link to send; the first hand is dealt when your friend joins. Under a clock, a player whose time runs out may lose the match."),
  );
  let presets = [];

  const radio = (name, value, label, checked) =>
    h("label.choice", {}, h("input", { type: "radio", name, value, checked }), " ", label);

  const form = h(
    "form.panel.newmatch",
    { onsubmit: (event) => create(event, me, { form, presets, presetSelect, levelSelect, starterSelect, clockSelect, publicBox, bigGinBox, bonusesBox, name1, name2, start }), onchange: sync },
    h("h1", {}, "New match"),
    h("label.field", {}, "Rules ", presetSelect),
    presetInfo,
    h("fieldset", {}, h("legend", {}, "Length"),
      radio("hands", "single", "Single hand", pref("length", "single") === "single"),
      h("label.choice", {}, h("input", { type: "radio", name: "hands", value: "match", checked: pref("length", "single") === "match" }), h("span#length-text", {}, " To "), target, " points"),
      starterField,
    ),
    variations,
    h("fieldset", {}, h("legend", {}, "Opponent"),
      h("label.choice", {}, h("input", { type: "radio", name: "opponent", value: "computer", checked: pref("opponent", "computer") === "computer" }), " The computer, level ", levelSelect),
      radio("opponent", "hotseat", "Two people on this device", pref("opponent", "computer") === "hotseat"),
      radio("opponent", "friend", "A friend on another device", pref("opponent", "computer") === "friend"),
      friendOptions,
    ),
    asPlayer,
    hotseatNote,
    h("div.names", {}, name1Field, h("label.field#name2-field", {}, h("span#name2-label", {}, "Computer's name"), " ", name2)),
    h("div.actions", {}, start),
  );
  root.append(continueList(), form);

  let synced = null; // the preset the variations were last set from
  function sync() {
    const preset = presets.find((p) => p.name === presetSelect.value);
    if (preset) {
      const r = rulesOf(preset);
      presetInfo.textContent = preset.description;
      target.textContent = r.target_score;
      // Hollywood scoring is three games: never a single hand.
      const single = form.querySelector("input[name=hands][value=single]");
      single.disabled = Boolean(r.hollywood);
      if (r.hollywood && single.checked) form.querySelector("input[name=hands][value=match]").checked = true;
      form.querySelector("#length-text").textContent = r.hollywood ? " Three games at once, each to " : " To ";
      if (synced !== preset.name) {
        synced = preset.name;
        bigGinBox.checked = r.big_gin_bonus !== null && r.big_gin_bonus !== undefined;
        bonusesBox.checked = hasBonuses(r);
      }
      bigGinText.textContent = `Big Gin: all eleven cards melded after the draw are laid down, without a discard, for the other player's deadwood + ${bigGinBonus(r)}`;
      const b = bonusesOf(r);
      bonusesText.textContent = `Match bonuses: ${b.game_bonus} to a game's winner, ${b.box_bonus} a hand won (a box), doubled on a shutout`;
      // The bonuses are settled at the end of a match to the target (Hollywood: always).
      bonusesBox.disabled = Boolean(r.hollywood) || form.elements.hands.value === "single";
    }
    const opponent = form.elements.opponent.value;
    const hotseat = opponent === "hotseat";
    const friend = opponent === "friend";
    levelSelect.disabled = opponent !== "computer";
    starterSelect.disabled = form.elements.hands.value === "single"; // one hand: the first player starts it
    friendOptions.hidden = !friend;
    form.querySelector("#name2-field").hidden = friend; // the friend gives their own name
    name2.required = !friend;
    form.querySelector("#name2-label").textContent = hotseat ? "Second player" : "Computer's name";
    name1.previousSibling.textContent = hotseat ? "First player " : "Your name ";
    if (!name2.dataset.edited) name2.value = hotseat ? "Player 2" : "Computer";
    start.textContent = friend ? "Invite" : "Deal";
    const byPlayer = Boolean(me) && !hotseat;
    name1Field.hidden = byPlayer;
    name1.required = !byPlayer;
    if (asPlayer) asPlayer.hidden = !byPlayer;
    if (hotseatNote) hotseatNote.hidden = !hotseat;
    form.querySelector(".names").hidden = byPlayer && friend;
  }
  name2.addEventListener("input", () => (name2.dataset.edited = "1"));

  api.presets().then(
    (body) => {
      presets = body.presets;
      presetSelect.replaceChildren(...presets.map((p) => h("option", { value: p.name }, p.name)));
      presetSelect.value = presets.some((p) => p.name === pref("preset")) ? pref("preset") : presets[0].name;
      sync();
    },
    (err) => toast(`Could not load the rules presets: ${problemText(err)}`, "error"),
  );
  sync();
}

// The variants' parameters, for a service whose presets list answers without them
// (they came after it): as the contract gives them (service/engine/rules.py PRESETS).
const VARIANTS = {
  oklahoma: { oklahoma: true, spade_doubles: true, game_bonus: 100, box_bonus: 20, shutout_doubles: true },
  straight: { big_gin_bonus: 31, game_bonus: 100, box_bonus: 25, shutout_doubles: true },
  hollywood: { hollywood: true, game_bonus: 100, box_bonus: 25, shutout_doubles: true },
};
const rulesOf = (preset) => ("hollywood" in preset.rules ? preset.rules : { ...(VARIANTS[preset.name] || {}), ...preset.rules });

// The variations: the values a preset plays them with, or the rule books' usual ones.
const hasBonuses = (r) => Boolean(r.game_bonus || r.box_bonus || r.shutout_doubles);
const bigGinBonus = (r) => r.big_gin_bonus ?? 31;
const bonusesOf = (r) => (hasBonuses(r) ? { game_bonus: r.game_bonus, box_bonus: r.box_bonus, shutout_doubles: r.shutout_doubles } : { game_bonus: 100, box_bonus: 25, shutout_doubles: true });

// The preset's rules changed by the variations chosen (only what differs is sent).
function variationRules(preset, { bigGin, bonuses, single }) {
  const r = rulesOf(preset);
  const out = {};
  const had = r.big_gin_bonus !== null && r.big_gin_bonus !== undefined;
  if (bigGin !== had) out.big_gin_bonus = bigGin ? bigGinBonus(r) : null;
  if (!single && !r.hollywood && bonuses !== hasBonuses(r)) Object.assign(out, bonuses ? bonusesOf(r) : { game_bonus: 0, box_bonus: 0, shutout_doubles: false });
  return out;
}

// The form sent: the match made, its tokens (or the player's) kept, and to its table.
async function create(event, me, { form, presets, presetSelect, levelSelect, starterSelect, clockSelect, publicBox, bigGinBox, bonusesBox, name1, name2, start }) {
  event.preventDefault();
  const opponent = form.elements.opponent.value;
  const single = form.elements.hands.value === "single";
  const second =
    opponent === "hotseat"
      ? { name: name2.value.trim() || "Player 2", kind: "human" }
      : opponent === "friend"
        ? { kind: "open" }
        : { name: name2.value.trim() || "Computer", kind: "computer", level: levelSelect.value };
  const byPlayer = Boolean(me) && opponent !== "hotseat";
  const body = {
    rules: { preset: presetSelect.value },
    single_hand: single,
    // The player's seat is named by the service, after the player.
    seats: [byPlayer ? { kind: "human" } : { name: name1.value.trim() || "You", kind: "human" }, second],
  };
  const preset = presets.find((p) => p.name === presetSelect.value);
  if (preset) Object.assign(body.rules, variationRules(preset, { bigGin: bigGinBox.checked, bonuses: bonusesBox.checked, single }));
  if (!single) {
    // Left out at the default, as the service records it.
    if (starterSelect.value !== "alternate") body.rules.starter = starterSelect.value;
    setPref("starter", starterSelect.value);
  }
  if (opponent === "friend") {
    body.rules.turn_seconds = clockSelect.value === "none" ? null : Number(clockSelect.value);
    body.public = publicBox.checked;
    setPref("clock", clockSelect.value);
    setPref("public", publicBox.checked);
  }
  setPref("preset", presetSelect.value);
  setPref("length", single ? "single" : "match");
  setPref("opponent", opponent);
  setPref("level", levelSelect.value);
  if (!byPlayer) setPref("name", body.seats[0].name);
  start.disabled = true;
  try {
    const created = await api.createMatch(body, byPlayer ? me.token : undefined);
    const tokens = {};
    for (const seat of created.seats) if (seat.token) tokens[seat.seat] = seat.token;
    const mode = opponent === "friend" ? "online" : opponent;
    // The invite code is shown this once: it is kept with the token, for the waiting
    // page.  A player's match keeps no seat token: the player token opens it.
    const keys = byPlayer ? { player: me.id } : { tokens };
    saveMatch(created.id, { ...keys, mode, invite: created.invite, public: created.public, created: new Date().toISOString(), resultSeen: 0 });
    location.hash = `#/play/${created.id}`;
  } catch (err) {
    toast(problemText(err), "error");
    start.disabled = false;
  }
}

// The active matches this browser holds a seat of, newest first; and the player's.
function continueList() {
  const list = h("ul.continue");
  const box = h("section.panel.continue-box", { hidden: true }, h("h2", {}, "Continue"), list);
  const me = currentPlayer();
  if (me) {
    const mine = h("ul.continue#continue-player");
    list.before(mine);
    api.myMatches(me.token, { status: "active", limit: 5 }).then(
      (page) => {
        for (const m of page.items) {
          const score = `hand ${m.hand_number}, ${m.scores[m.seat]}–${m.scores[1 - m.seat]}`;
          mine.append(
            h("li", {}, h("a", { href: `#/play/${m.id}` }, `vs ${m.opponent.name ?? "(open seat)"} — ${score}`), m.your_turn ? h("span.turn-badge", {}, "Your turn") : null),
          );
        }
        if (page.items.length) {
          mine.append(h("li.all", {}, h("a", { href: "#/games" }, "All my games…")));
          box.hidden = false;
        }
      },
      () => {},
    );
  }
  const entries = Object.entries(savedMatches()).sort((a, b) => (b[1].created || "").localeCompare(a[1].created || ""));
  for (const [id, entry] of entries.slice(0, 20)) {
    if (entry.finished) continue;
    const token = Object.values(entry.tokens || {})[0];
    if (!token) continue;
    api.summary(token).then(
      (s) => {
        if (!s || s.status === "finished") {
          if (s) saveMatch(id, { finished: true });
          return;
        }
        const names = s.seats.map((x) => x.name ?? "(open seat)").join(" vs ");
        const where = s.status === "waiting" ? "waiting for a player to join" : `hand ${s.hand_number}, ${s.scores.join("–")}`;
        list.append(h("li", {}, h("a", { href: `#/play/${id}` }, `${names} — ${where}`)));
        box.hidden = false;
      },
      () => {},
    );
  }
  return box;
}
