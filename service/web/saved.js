// What this browser remembers: the seat tokens of the matches it created or imported
// (a seat token is the key to one match), the player token of the player this browser
// plays as (the key to every match of that player, from any device), and small
// preferences.  A match played as the player keeps no seat token here: an entry of it
// holds { player: <player id> } and what the table remembers (the invite, the result
// seen), so that signing out leaves no key to it behind.

const KEY = "gin-rummy.matches";
const PREFS = "gin-rummy.prefs";
const PLAYER = "gin-rummy.player";

function read(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

export function savedMatches() {
  return read(KEY, {});
}

export function savedMatch(id) {
  return savedMatches()[id] || null;
}

export function saveMatch(id, entry) {
  const all = savedMatches();
  all[id] = { ...(all[id] || {}), ...entry };
  localStorage.setItem(KEY, JSON.stringify(all));
  return all[id];
}

export function forgetMatch(id) {
  const all = savedMatches();
  delete all[id];
  localStorage.setItem(KEY, JSON.stringify(all));
}

// Tokens by seat ("0", "1") -> token; the seats this browser plays.
export function seatsOf(entry) {
  return Object.keys(entry?.tokens || {})
    .map(Number)
    .sort();
}

export function anyToken(entry) {
  const seats = seatsOf(entry);
  return seats.length ? entry.tokens[seats[0]] : null;
}

export function pref(name, fallback) {
  return read(PREFS, {})[name] ?? fallback;
}

export function setPref(name, value) {
  localStorage.setItem(PREFS, JSON.stringify({ ...read(PREFS, {}), [name]: value }));
}

// --- the player ----------------------------------------------------------------------

// { id, name, token } of the player this browser plays as, or null.
export function currentPlayer() {
  const p = read(PLAYER, null);
  return p && typeof p.token === "string" && typeof p.id === "string" ? p : null;
}

// Every screen showing the player (the header) hears of a change on `window`.
export const PLAYER_CHANGED = "gin-rummy:player";

export function savePlayer(player) {
  const { id, name, token } = player;
  localStorage.setItem(PLAYER, JSON.stringify({ id, name, token }));
  window.dispatchEvent(new Event(PLAYER_CHANGED));
}

export function renamePlayer(name) {
  const p = currentPlayer();
  if (p) savePlayer({ ...p, name });
}

// Sign out: the player token and what was kept of the player's matches are forgotten.
export function forgetPlayer() {
  const p = currentPlayer();
  const all = savedMatches();
  for (const [id, entry] of Object.entries(all)) if (p && entry.player === p.id && !seatsOf(entry).length) delete all[id];
  localStorage.setItem(KEY, JSON.stringify(all));
  localStorage.removeItem(PLAYER);
  window.dispatchEvent(new Event(PLAYER_CHANGED));
}

// Another tab signed in or out.
window.addEventListener("storage", (event) => {
  if (event.key === PLAYER || event.key === null) window.dispatchEvent(new Event(PLAYER_CHANGED));
});

// The token to read a match with: a seat token kept here, else the player's (when the
// entry is the player's own, or `orPlayer`: a match of the player's made elsewhere).
export function tokenFor(entry, { orPlayer = false } = {}) {
  const seat = anyToken(entry);
  if (seat) return seat;
  const p = currentPlayer();
  if (p && (orPlayer || (entry && entry.player === p.id))) return p.token;
  return null;
}

// Whether this browser holds a seat of the match: by a seat token, or as the player.
export function holds(entry) {
  return Boolean(entry) && (seatsOf(entry).length > 0 || (Boolean(entry.player) && entry.player === currentPlayer()?.id));
}
