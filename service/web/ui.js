// Small DOM helpers shared by the screens.

// h("button.primary#go", {onclick, disabled}, "text", child, ...)
export function h(spec, props = {}, ...children) {
  const [, tag, rest = ""] = spec.match(/^([a-z0-9]+)(.*)$/i);
  const el = document.createElement(tag);
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A device without a fine pointer (a phone, a tablet): the page says "tap", not
// "click", and shows no keyboard help.
export const touchOnly = () => !matchMedia("(any-pointer: fine)").matches;
export const tapWord = () => (touchOnly() ? "tap" : "click");

let toastTimer = null;

export function toast(message, kind = "info") {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.className = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), kind === "error" ? 6000 : 3500);
}

// Copy a text field's value (a link) to the clipboard, or, where the browser refuses,
// leave it selected for the person to copy; says which in a toast.
export async function copyField(input, copiedMessage) {
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(input.value);
      copied = true;
    } catch {
      // refused (no permission): select it instead
    }
  }
  if (!copied) {
    input.focus();
    input.select();
    input.setSelectionRange(0, input.value.length);
    try {
      copied = document.execCommand("copy");
    } catch {
      copied = false;
    }
  }
  toast(copied ? copiedMessage : "The link is selected: copy it (Ctrl+C, or a long press).");
}

// An API problem, for people: its detail, and the rule it names.
export function problemText(err) {
  if (!err || !err.problem) return String(err && err.message ? err.message : err);
  const p = err.problem;
  return p.rule ? `${p.detail} (${p.rule})` : p.detail || p.title || err.message;
}

export function seatLabel(seat) {
  if (!seat) return "";
  if (seat.kind === "open") return "(open seat)";
  // A computer's default name says its level already: "Computer (hard)".
  if (seat.kind === "computer" && !String(seat.name).endsWith(`(${seat.level})`)) return `${seat.name} (${seat.level})`;
  return seat.name;
}

export function downloadText(filename, text) {
  const blob = new Blob([text], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function matchLength(rules) {
  if (rules.hollywood) return `three games to ${rules.target_score}`;
  return rules.single_hand ? "single hand" : `to ${rules.target_score}`;
}

// A hand's knock limit as people say it: 0 is Gin only (Straight Gin, Oklahoma's ace).
export const knockLimitText = (limit) => (limit === 0 ? "Gin only" : `Knock at ${limit} or less`);
// The hand's knock limit: the view's (Oklahoma: this hand's upcard's), or the rules'.
export const handLimit = (v) => v.knock_limit ?? v.rules.knock_limit;

// "Ann knocks" but "You knock": a verb agreeing with a player's name.
const BASE = { goes: "go", passes: "pass", has: "have", lays: "lay" };
export const verbFor = (name, verb) => (name === "You" ? BASE[verb] || verb.replace(/s$/, "") : verb);
export const says = (name, verb) => `${name} ${verbFor(name, verb)}`;

// --- online play: clocks, times, how a match ended ----------------------------------

// A rule's clock: turn_seconds null, 30, 259200 ... as people say it.
export function clockText(seconds) {
  if (seconds === null || seconds === undefined) return "no clock";
  const plural = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (seconds % 86400 === 0) return `${plural(seconds / 86400, "day")} per turn`;
  if (seconds % 3600 === 0) return `${plural(seconds / 3600, "hour")} per turn`;
  if (seconds >= 120 && seconds % 60 === 0) return `${plural(seconds / 60, "minute")} per turn`;
  return `${seconds} seconds per turn`;
}

// The time left on a clock: 0:27, 5 h 12 min, 2 days 23 h.
export function remainingText(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 3600) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  const days = Math.floor(s / 86400);
  return `${days} day${days === 1 ? "" : "s"} ${Math.floor((s % 86400) / 3600)} h`;
}

// How long ago an ISO 8601 time was, from `now` (ms).
export function agoText(iso, now = Date.now()) {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

// How a finished match ended, in a sentence (names: the seats' names).
export function endText(reason, winner, names) {
  if (reason === "aborted") return "The match was called off before anyone joined.";
  if (winner === null || winner === undefined) return "The match is over: nobody won.";
  const w = names[winner];
  const l = names[1 - winner];
  if (reason === "resigned") return `${l} resigned: ${says(w, "wins")} the match.`;
  if (reason === "timeout") return `${l} ran out of time: ${says(w, "wins")} the match.`;
  return `${says(w, "wins")} the match.`;
}

// --- players -------------------------------------------------------------------------

// A refusal of one field of a request body (422 invalid_request: errors[field]) in the
// service's own words, else the problem itself.
export function fieldProblem(err, field) {
  const errors = (err && err.problem && err.problem.errors) || {};
  if (err && err.status === 422 && errors[field]) {
    const text = [].concat(errors[field]).join(" ");
    return text.charAt(0).toUpperCase() + text.slice(1) + ".";
  }
  return problemText(err);
}

// A Glicko-2 number (rating, deviation) as people read it.
export const rounded = (x) => String(Math.round(x));

// "1 match", "3 wins".
export const plural = (n, word, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

// Go to a screen, drawing it again when it is the one shown.
export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}
