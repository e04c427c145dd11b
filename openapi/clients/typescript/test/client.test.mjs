// The client's helpers against a fake fetch (no service needed): versions, the bearer
// token, retries under one Idempotency-Key, and problems.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createClient, ifMatch, isProblem, newIdempotencyKey, ProblemError, retryAfterSeconds, versionOf } from "@gin-rummy/client";

const MATCH = "8fca4ae8-f505-485c-8e86-5f64a40cd723";
const VIEW = { match_id: MATCH, version: 7, legal_actions: [] };

function problem(status, code, headers = {}) {
  const body = { type: `/problems/${code}`, title: "Refused", status, code, detail: `refused: ${code}` };
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/problem+json", ...headers } });
}

function json(body, headers = {}) {
  return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json", ...headers } });
}

/** A client whose fetch answers from `answers` in turn (a Response, or an Error to throw); `requests` what it was sent. */
function scripted(...answers) {
  const requests = [];
  const client = createClient({
    baseUrl: "http://service.test/",
    token: "seat-token",
    retry: { baseDelayMs: 1 },
    fetch: async (request) => {
      requests.push(request);
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  return { client, requests };
}

test("versions: an ETag's version, and If-Match from a number, an ETag or an answer", () => {
  assert.equal(versionOf('"12"'), 12);
  assert.equal(versionOf('"12.c"'), 12);
  assert.equal(versionOf('W/"3.t.c"'), 3);
  assert.equal(versionOf("12"), undefined);
  assert.equal(versionOf(null), undefined);
  assert.equal(ifMatch(4), '"4"');
  assert.equal(ifMatch('"4.c"'), '"4.c"');
  assert.equal(ifMatch("4"), '"4"');
  assert.equal(ifMatch({ etag: '"5.r"', version: 5 }), '"5.r"');
  assert.equal(ifMatch({ version: 6 }), '"6"');
});

test("Retry-After: seconds or an HTTP date", () => {
  assert.equal(retryAfterSeconds("2"), 2);
  assert.equal(retryAfterSeconds(null), undefined);
  assert.equal(retryAfterSeconds("soon"), undefined);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterSeconds("Thu, 01 Jan 2026 00:00:30 GMT", now), 30);
});

test("an Idempotency-Key is a random UUID", () => {
  const keys = new Set(Array.from({ length: 100 }, newIdempotencyKey));
  assert.equal(keys.size, 100);
  for (const key of keys) assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("the bearer token goes with every request; an explicit Authorization header wins; the ETag is read", async () => {
  const { client, requests } = scripted(json(VIEW, { ETag: '"7.c"' }), json(VIEW));
  const seen = await client.view(MATCH);
  assert.equal(requests[0].url, `http://service.test/matches/${MATCH}`);
  assert.equal(requests[0].headers.get("Authorization"), "Bearer seat-token");
  assert.deepEqual([seen.etag, seen.version, seen.data.version], ['"7.c"', 7, 7]);
  await client.GET("/matches/{match_id}", { params: { path: { match_id: MATCH } }, headers: { Authorization: "Bearer other" } });
  assert.equal(requests[1].headers.get("Authorization"), "Bearer other");
  // Without an ETag (a page whose CORS does not expose it) the body's version stands in.
  const bare = scripted(json(VIEW));
  assert.deepEqual([(await bare.client.view(MATCH)).etag], ['"7"']);
});

test("an action retried after 503 and 429 (Retry-After) and a lost answer, always under the same key", async () => {
  const result = { view: { ...VIEW, version: 8 }, events: [] };
  const { client, requests } = scripted(
    problem(503, "database_unavailable", { "Retry-After": "0" }),
    problem(429, "rate_limited", { "Retry-After": "0" }),
    new TypeError("fetch failed"),
    json(result, { ETag: '"8"', "Idempotent-Replayed": "true" }),
  );
  const retried = [];
  const acted = await client.act(MATCH, { type: "draw", source: "stock" }, { ifMatch: { etag: '"7.c"' }, retry: { onRetry: (r) => retried.push(r.attempt) } });
  assert.equal(requests.length, 4);
  const keys = new Set(requests.map((r) => r.headers.get("Idempotency-Key")));
  assert.equal(keys.size, 1);
  assert.deepEqual([...keys], [acted.idempotencyKey]);
  for (const request of requests) assert.equal(request.headers.get("If-Match"), '"7.c"');
  assert.deepEqual(await requests[3].json(), { type: "draw", source: "stock" });
  assert.deepEqual(retried, [1, 2, 3]);
  assert.deepEqual([acted.version, acted.replayed], [8, true]);
});

test("no retry of what a retry cannot mend, nor past the attempts, nor a wait longer than allowed", async () => {
  const illegal = scripted(problem(409, "illegal_move"));
  await assert.rejects(illegal.client.act(MATCH, { type: "pass" }, { ifMatch: 7 }), (e) => isProblem(e, "illegal_move"));
  assert.equal(illegal.requests.length, 1);

  const down = scripted(...Array.from({ length: 3 }, () => problem(503, "database_unavailable", { "Retry-After": "0" })));
  await assert.rejects(down.client.act(MATCH, { type: "pass" }, { ifMatch: 7, retry: { attempts: 3 } }), (e) => e.status === 503);
  assert.equal(down.requests.length, 3);

  const later = scripted(problem(429, "rate_limited", { "Retry-After": "60" }));
  await assert.rejects(later.client.act(MATCH, { type: "pass" }, { ifMatch: 7 }), (e) => isProblem(e, "rate_limited") && e.retryAfter === 60);
  assert.equal(later.requests.length, 1);

  // A match is created without a key: a timeout (it may have been made) is not retried, a 429 is.
  const created = { id: MATCH, version: 2, seats: [], view: VIEW };
  const timeout = scripted(problem(504, "service_timeout"), json(created));
  await assert.rejects(timeout.client.createMatch({}), (e) => e.status === 504);
  const limited = scripted(problem(429, "rate_limited", { "Retry-After": "0" }), json(created, { ETag: '"2"' }));
  assert.equal((await limited.client.createMatch({})).version, 2);
});

test("an answer that is no problem document is a ProblemError all the same", async () => {
  const { client } = scripted(new Response("<html>Bad Gateway</html>", { status: 502, statusText: "Bad Gateway" }));
  const error = await client.view(MATCH, { retry: false }).catch((e) => e);
  assert.ok(error instanceof ProblemError);
  assert.deepEqual([error.status, error.code, error.title, error.type], [502, "unexpected_response", "Bad Gateway", "about:blank"]);
  assert.match(error.detail, /Bad Gateway/);
});
