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

let toastTimer = null;

export function toast(message, kind = "info") {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.className = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), kind === "error" ? 6000 : 3500);
}

// An API problem, for people: its detail, and the rule it names.
export function problemText(err) {
  if (!err || !err.problem) return String(err && err.message ? err.message : err);
  const p = err.problem;
  return p.rule ? `${p.detail} (${p.rule})` : p.detail || p.title || err.message;
}

export function seatLabel(seat) {
  if (!seat) return "";
  return seat.kind === "computer" ? `${seat.name} (${seat.level})` : seat.name;
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
  return rules.single_hand ? "single hand" : `to ${rules.target_score}`;
}

// "Ann knocks" but "You knock": a verb agreeing with a player's name.
const BASE = { goes: "go", passes: "pass", has: "have", lays: "lay" };
export const verbFor = (name, verb) => (name === "You" ? BASE[verb] || verb.replace(/s$/, "") : verb);
export const says = (name, verb) => `${name} ${verbFor(name, verb)}`;
