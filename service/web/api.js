// The REST API, called exactly as the OpenAPI document describes it (openapi/openapi.yaml).
// Every error is application/problem+json; it is thrown as an ApiError carrying the problem.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.code = problem.code || "http_error";
    this.rule = problem.rule || null;
  }
}

// crypto.randomUUID exists only in secure contexts (https, localhost); a phone on the
// local network reaches the service over plain http, so build a v4 UUID by hand.
export function uniqueKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// The service's clock, estimated from the Date header of its answers: a deadline is a
// time on the service's clock, and a device's own clock may be minutes off.  The header
// has whole seconds, so an estimate within 2 s of this device's clock counts as none.
let clockOffset = 0;
export const serverNow = () => Date.now() + clockOffset;

function noteServerTime(response) {
  const date = Date.parse(response.headers.get("Date") || "");
  if (Number.isNaN(date)) return;
  const offset = date + 500 - Date.now();
  clockOffset = Math.abs(offset) > 2000 ? offset : 0;
}

async function request(method, path, { token, body, headers = {}, raw = false, text = false } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers } };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, init);
  noteServerTime(response);
  if (response.status === 304) return { status: 304, body: null, response };
  const type = response.headers.get("Content-Type") || "";
  if (text && response.ok) return response.text();
  const data = type.includes("json") ? await response.json().catch(() => ({})) : await response.text();
  if (!response.ok) {
    const problem = typeof data === "object" ? data : { detail: String(data).slice(0, 200) };
    throw new ApiError(response.status, problem);
  }
  return raw ? { status: response.status, body: data, response } : data;
}

const query = (params) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join("&");

export const api = {
  presets: () => request("GET", "/rules/presets"),
  // With a player token the player takes the first person's seat (its name defaulting
  // to the player's); the match is then the player's on every device.
  createMatch: (body, token) => request("POST", "/matches", { body, token }),
  view: (id, token) => request("GET", `/matches/${id}`, { token }),
  summary: async (token) => (await request("GET", "/matches", { token })).items[0] || null,
  events: (id, token, after) => request("GET", `/matches/${id}/events?after=${after}`, { token }),
  hands: (id, token) => request("GET", `/matches/${id}/hands`, { token }),
  hand: (id, token, n) => request("GET", `/matches/${id}/hands/${n}`, { token }),
  // The record as text, byte for byte: parsing it would round its 63-bit seeds (a JS
  // number holds 53 bits) and the digest would no longer match on import.
  exportRecord: (id, token) => request("GET", `/matches/${id}/export`, { token, text: true }),
  importRecord: (text) => request("POST", "/matches/import", { body: text, raw: true }),

  // The coach: a hint for the seat to act (recorded: the match is then never rated), and
  // every decision of a hand that is over weighed, with each seat's accuracy.
  // The player's notifications after a cursor (a page; `next_cursor` when there are more).
  notifications: (token, after = 0, limit = 500) => request("GET", `/players/me/notifications?after=${after}&limit=${limit}`, { token }),

  hint: (id, token) => request("GET", `/matches/${id}/hint`, { token }),
  handAnalysis: (id, token, n) => request("GET", `/matches/${id}/hands/${n}/analysis`, { token }),
  matchAnalysis: (id, token) => request("GET", `/matches/${id}/analysis`, { token }),

  // Online play: take the open seat (the code is not needed for a public match), the
  // public matches waiting, and the same match again once it is over.
  join: (id, code, name, token) => request("POST", `/matches/${id}/join`, { body: code ? { code, name } : { name }, token }),
  lobby: (cursor, limit = 20) => request("GET", `/lobby?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
  rematch: (id, token) => request("POST", `/matches/${id}/rematch`, { token, raw: true }),

  // Players: a guest (its token is answered this once), the player, their matches (by
  // status, newest first, in pages), public profiles and the leaderboard.
  createPlayer: (name) => request("POST", "/players", { body: { name } }),
  me: (token) => request("GET", "/players/me", { token }),
  rename: (token, name) => request("PATCH", "/players/me", { token, body: { name } }),
  // Everything held about the player (NDJSON, as text), and deleting the player.
  myData: (token) => request("GET", "/players/me/data", { token, text: true }),
  deleteMe: (token) => request("DELETE", "/players/me", { token }),
  myMatches: (token, { status, cursor, limit = 20 } = {}) =>
    request("GET", `/players/me/matches?${query({ status, limit, cursor })}`, { token }),
  profile: (id) => request("GET", `/players/${encodeURIComponent(id)}`),
  leaderboard: (cursor, limit = 20) => request("GET", `/leaderboard?${query({ limit, cursor })}`),
  postTicket: (token, body) => request("POST", "/matchmaking/tickets", { token, body }),
  ticket: (token, id) => request("GET", `/matchmaking/tickets/${id}`, { token }),
  cancelTicket: (token, id) => request("DELETE", `/matchmaking/tickets/${id}`, { token }),

  // One action: If-Match makes it apply only to the state the player saw; the
  // Idempotency-Key makes a retry after a network failure safe (same key, same answer).
  async act(id, token, version, action) {
    const headers = { "If-Match": `"${version}"`, "Idempotency-Key": uniqueKey() };
    const send = () => request("POST", `/matches/${id}/actions`, { token, body: action, headers });
    try {
      return await send();
    } catch (err) {
      if (err instanceof ApiError) throw err;
      return send(); // the network failed: the same key cannot apply the action twice
    }
  },
};

// Server-Sent Events with a bearer token.  EventSource cannot send an Authorization
// header, so the stream is read with fetch; like EventSource it reconnects after the
// server closes it (every `wait` seconds), resuming with Last-Event-ID.  A match's stream
// ends with its match_ended event; the player's feed (followNotifications) never ends.
export function followStream(id, token, after, onEvent, { wait = 60 } = {}) {
  return followEvents(`/matches/${id}/stream`, token, after, onEvent, { wait, ends: (event) => event.type === "match_ended" });
}

export function followNotifications(token, after, onNote, { wait = 60 } = {}) {
  return followEvents("/players/me/stream", token, after, onNote, { wait, ends: () => false });
}

function followEvents(path, token, after, onEvent, { wait, ends }) {
  const controller = new AbortController();
  let last = after;
  let retry = 1000;
  let stopped = false;

  async function once() {
    const response = await fetch(`${path}?wait=${wait}`, {
      headers: { Authorization: `Bearer ${token}`, "Last-Event-ID": String(last), Accept: "text/event-stream" },
      signal: controller.signal,
      cache: "no-store",
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({}));
      throw new ApiError(response.status, problem);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields = { data: [] };
        for (const line of frame.split("\n")) {
          if (!line || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (name === "data") fields.data.push(val);
          else fields[name] = val;
        }
        if (fields.retry && /^\d+$/.test(fields.retry)) retry = Number(fields.retry);
        if (fields.id !== undefined) last = Number(fields.id);
        if (fields.data.length) {
          const event = JSON.parse(fields.data.join("\n"));
          onEvent(event);
          if (ends(event)) return true;
        }
      }
    }
  }

  (async () => {
    while (!stopped) {
      try {
        if (await once()) return;
      } catch (err) {
        if (stopped) return;
        if (err instanceof ApiError && err.status < 500) return; // 401/403/404: retrying cannot help
      }
      await new Promise((r) => setTimeout(r, retry));
    }
  })();

  return () => {
    stopped = true;
    controller.abort();
  };
}
