// What this browser remembers: the seat tokens of the matches it created or imported
// (there is no user account; a token is the only key to a match) and small preferences.

const KEY = "gin-rummy.matches";
const PREFS = "gin-rummy.prefs";

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
