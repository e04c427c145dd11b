// The client against a served instance of the service, at GIN_RUMMY_TEST_URL
// (tests/api/test_typescript_sdk.py serves one and runs `npm test` with it); skipped without.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createClient, followMatch, isProblem, ProblemError, versionOf } from "@gin-rummy/client";

const BASE = process.env.GIN_RUMMY_TEST_URL;
const live = { skip: BASE ? false : "GIN_RUMMY_TEST_URL is not set: no service to test against", timeout: 120_000 };
const ENDINGS = new Set(["resign", "claim_timeout", "abort"]);

/** A match between two people (one hand); `fetch` (optional) is given to every client. */
async function newMatch(fetch) {
  const service = createClient({ baseUrl: BASE, ...(fetch ? { fetch } : {}) });
  const created = await service.createMatch({ single_hand: true, seats: [{ name: "Ann" }, { name: "Bob" }] });
  assert.equal(created.version, created.data.version);
  const seats = created.data.seats.map((seat) => service.withToken(seat.token));
  return { id: created.data.id, seats, created };
}

/** A play from the view's legal actions: end the hand when it may (gin, knock), defend, draw from
 * the stock, discard the card leaving the least deadwood. None when it is not the seat's turn. */
function choose(view) {
  const plays = view.legal_actions.filter((a) => !ENDINGS.has(a.type));
  const first = (type, test = () => true) => plays.find((a) => a.type === type && test(a));
  const discards = plays.filter((a) => a.type === "discard");
  const leastDeadwood = discards.sort((a, b) => view.discard_deadwood[a.card] - view.discard_deadwood[b.card])[0];
  return first("gin") ?? first("knock") ?? first("defend") ?? first("pass") ?? first("draw", (a) => a.source === "stock") ?? leastDeadwood ?? plays[0];
}

/** Play the match's hand to its end with both seats, each action with If-Match and a new key;
 * answers the last answer of each seat and the number of actions. */
async function playHand({ id, seats }, afterEach = async () => {}) {
  let seat = 0;
  let seen = await seats[seat].view(id);
  let actions = 0;
  while (seen.data.status === "active") {
    const action = choose(seen.data);
    if (!action) {
      seat = 1 - seat;
      seen = await seats[seat].view(id);
      continue;
    }
    const acted = await seats[seat].act(id, action, { ifMatch: seen });
    assert.equal(acted.replayed, false);
    assert.ok(acted.version > seen.version, `${acted.version} follows ${seen.version}`);
    assert.equal(acted.version, acted.data.view.version);
    assert.equal(versionOf(acted.etag), acted.version);
    assert.deepEqual(acted.data.events.map((e) => e.seq), range(seen.version + 1, acted.version));
    seen = { ...acted, data: acted.data.view };
    actions++;
    assert.ok(actions < 300, "the hand ends");
    await afterEach(actions);
  }
  return { last: seen, actions };
}

/** The events page of a seat (what the stream must give, in the same order). */
async function eventsOf(client, id) {
  const { data, error } = await client.GET("/matches/{match_id}/events", { params: { path: { match_id: id }, query: { limit: 1000 } } });
  assert.equal(error, undefined);
  return data.events;
}

const range = (from, to) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** A fetch that records each stream request's Last-Event-ID (and, with `change`, may alter an answer). */
function recording(change = async (response) => response) {
  const streams = [];
  const fetch = async (request) => {
    const stream = new URL(request.url).pathname.endsWith("/stream");
    if (stream) streams.push(request.headers.get("Last-Event-ID"));
    const response = await globalThis.fetch(request);
    return stream ? change(response, streams.length) : response;
  };
  return { fetch, streams };
}

test("a whole hand between two people, followed live by both seats: every event once, in order", live, async (t) => {
  const record = recording();
  const match = await newMatch(record.fetch);
  const [ann, bob] = match.seats;

  const annEvents = [];
  // (wait: the service holds each connection until the match ends: only Bob's resumption reconnects.)
  const annFollowing = followMatch(ann, match.id, undefined, { wait: 600, onEvent: (e) => annEvents.push(e) });

  // Bob stops following after his fifth event, mid-hand, and follows again from it while the play goes on.
  const bobEvents = [];
  const stopBob = new AbortController();
  const bobFirst = followMatch(bob, match.id, undefined, {
    wait: 600,
    signal: stopBob.signal,
    onEvent: (e) => {
      bobEvents.push(e);
      if (bobEvents.length === 5) stopBob.abort();
    },
  });
  const bobFollowing = bobFirst.then((stopped) => {
    assert.deepEqual(stopped, { lastEventId: 5, ended: false, aborted: true });
    return followMatch(bob, match.id, undefined, { wait: 600, lastEventId: stopped.lastEventId, onEvent: (e) => bobEvents.push(e) });
  });

  const { last, actions } = await playHand(match, async (n) => {
    if (n % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 20)); // let the followers read in between
  });
  assert.ok(actions >= 2, `${actions} actions: a draw and a knock at least (a lucky deal knocks at once)`);
  assert.equal(last.data.status, "finished");
  assert.equal(last.data.phase, "match_over");

  const annDone = await annFollowing;
  const bobDone = await bobFollowing;
  assert.deepEqual(annDone, { lastEventId: last.version, ended: true, aborted: false });
  assert.deepEqual(bobDone, { lastEventId: last.version, ended: true, aborted: false });

  const all = range(1, last.version);
  assert.deepEqual(annEvents.map((e) => e.seq), all);
  assert.deepEqual(bobEvents.map((e) => e.seq), all, "Bob's two followings: no gap, no double");
  assert.deepEqual(annEvents, await eventsOf(ann, match.id), "the stream gives Ann what the events page does");
  assert.deepEqual(bobEvents, await eventsOf(bob, match.id), "and Bob his (redacted for his seat)");
  assert.deepEqual(record.streams.filter((id) => id !== null), ["5"], "Bob resumed with Last-Event-ID 5");

  // Typed events, redacted per seat: each sees its own cards dealt, not the deck.
  const types = annEvents.map((e) => e.type);
  assert.deepEqual([types[0], types[1], types.at(-1)], ["match_started", "hand_dealt", "match_ended"]);
  assert.ok(types.includes("hand_ended"));
  const [annDeal, bobDeal] = [annEvents[1], bobEvents[1]];
  assert.equal(annDeal.data.cards.length, 10);
  assert.equal(annDeal.data.deck, undefined);
  assert.notDeepEqual(annDeal.data.cards, bobDeal.data.cards);
  assert.equal(annDeal.data.upcard, bobDeal.data.upcard);
  const end = annEvents.at(-1);
  assert.deepEqual(end.data.scores, last.data.scores);
  const hand = annEvents.find((e) => e.type === "hand_ended");
  t.diagnostic(`${actions} actions, ${last.version} events; the hand ended by ${hand.data.result}, scores ${end.data.scores}`);
});

test("a connection dropped mid-way: resumed with Last-Event-ID after a backoff, no gap, no double", live, async () => {
  const match = await newMatch();
  const { last } = await playHand(match);

  // The first connection is cut in the middle of the fifth event (after the retry field and three events).
  const record = recording(async (response, number) => {
    if (number > 1) return response;
    const text = await response.text();
    const frames = text.split("\n\n");
    const kept = `${frames.slice(0, 4).join("\n\n")}\n\n${frames[4].slice(0, 20)}`;
    let sent = false;
    const body = new ReadableStream({
      pull(controller) {
        if (sent) return controller.error(new TypeError("network connection lost"));
        controller.enqueue(new TextEncoder().encode(kept));
        sent = true;
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  });
  const client = createClient({ baseUrl: BASE, token: match.created.data.seats[0].token, fetch: record.fetch });

  const events = [];
  const errors = [];
  const opened = [];
  const done = await followMatch(client, match.id, undefined, {
    onEvent: (e) => events.push(e.seq),
    onError: (error, retry) => errors.push({ error, ...retry }),
    onOpen: ({ number, lastEventId }) => opened.push([number, lastEventId]),
  });
  assert.deepEqual(done, { lastEventId: last.version, ended: true, aborted: false });
  assert.deepEqual(events, range(1, last.version));
  assert.deepEqual(record.streams, [null, "3"]);
  assert.deepEqual(opened, [[1, undefined], [2, 3]]);
  assert.equal(errors.length, 1);
  assert.match(String(errors[0].error), /network connection lost/);
  assert.ok(errors[0].delayMs >= 500 && errors[0].delayMs <= 1000, `backoff from the stream's retry (1000 ms): ${errors[0].delayMs}`);
});

test("an illegal move: 409 illegal_move, the rule it breaks in a ProblemError", live, async () => {
  const match = await newMatch();
  const [ann, bob] = match.seats;
  const seen = await ann.view(match.id);
  assert.equal(seen.data.phase, "draw");

  const early = await ann.act(match.id, { type: "discard", card: seen.data.hand[0] }, { ifMatch: seen }).catch((e) => e);
  assert.ok(early instanceof ProblemError, String(early));
  assert.ok(isProblem(early, "illegal_move", "conflict"));
  assert.deepEqual([early.status, early.code, early.rule, early.title], [409, "illegal_move", "wrong_phase", "Conflict"]);
  assert.match(early.type, /\/problems\/illegal_move$/);
  assert.match(early.detail, /phase/);
  assert.equal(early.errors, undefined);
  assert.equal(early.problem.code, "illegal_move");
  assert.equal(early.response.headers.get("Content-Type"), "application/problem+json");

  const outOfTurn = await bob.act(match.id, { type: "draw", source: "stock" }, { ifMatch: seen }).catch((e) => e);
  assert.deepEqual([outOfTurn.status, outOfTurn.code, outOfTurn.rule], [409, "illegal_move", "not_your_turn"]);
  assert.equal((await ann.view(match.id)).version, seen.version, "nothing was done");
});

test("a stale If-Match: 412 version_mismatch with the current version; re-read the view and act again", live, async () => {
  const match = await newMatch();
  const ann = match.seats[0];
  const before = await ann.view(match.id);
  const drawn = await ann.act(match.id, { type: "draw", source: "stock" }, { ifMatch: before });

  const discardOn = (view) => view.legal_actions.find((a) => a.type === "discard"); // the hand goes on
  const stale = await ann.act(match.id, discardOn(drawn.data.view), { ifMatch: before }).catch((e) => e);
  assert.ok(isProblem(stale, "version_mismatch"), String(stale));
  assert.deepEqual([stale.status, stale.currentVersion, stale.title], [412, drawn.version, "Precondition Failed"]);
  assert.match(stale.type, /\/problems\/version_mismatch$/);
  assert.equal(versionOf(stale.etag), drawn.version);
  assert.equal(stale.rule, undefined);

  const now = await ann.view(match.id);
  const acted = await ann.act(match.id, discardOn(now.data), { ifMatch: now });
  assert.equal(acted.version, now.version + 1);

  // The same request again under the same key: the first answer, replayed; nothing done twice.
  const again = await ann.act(match.id, discardOn(now.data), { ifMatch: now, idempotencyKey: acted.idempotencyKey });
  assert.deepEqual([again.replayed, again.version, again.data.events], [true, acted.version, acted.data.events]);
  const reused = await ann.act(match.id, { type: "resign" }, { ifMatch: now, idempotencyKey: acted.idempotencyKey }).catch((e) => e);
  assert.deepEqual([reused.status, reused.code], [422, "idempotency_key_reused"]);
});

test("an answer lost to a 503 after the action was applied: retried under the same key, applied once", live, async () => {
  const keys = [];
  let lose = true;
  const fetch = async (request) => {
    const action = new URL(request.url).pathname.endsWith("/actions");
    if (action) keys.push(request.headers.get("Idempotency-Key"));
    const response = await globalThis.fetch(request);
    if (action && lose) {
      lose = false; // applied by the service, but the client hears a 503
      const body = { type: "/problems/service_unavailable", title: "Service Unavailable", status: 503, code: "service_unavailable", detail: "lost" };
      return new Response(JSON.stringify(body), { status: 503, headers: { "Content-Type": "application/problem+json", "Retry-After": "0" } });
    }
    return response;
  };
  const match = await newMatch(fetch);
  const ann = match.seats[0];
  const seen = await ann.view(match.id);
  const acted = await ann.act(match.id, { type: "draw", source: "stock" }, { ifMatch: seen });
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  assert.deepEqual([acted.replayed, acted.version], [true, seen.version + 1]);
  assert.equal((await ann.view(match.id)).version, seen.version + 1, "applied once");
});

test("other refusals: 422 invalid_request with its errors, 401 without a token, 404 for no such match", live, async () => {
  const service = createClient({ baseUrl: BASE });
  const invalid = await service.createMatch({ rules: { preset: "no-such-preset" } }).catch((e) => e);
  assert.deepEqual([invalid.status, invalid.code], [422, "invalid_request"]);
  assert.ok(invalid.errors.rules, JSON.stringify(invalid.errors));

  const match = await newMatch();
  const anonymous = await service.view(match.id).catch((e) => e);
  assert.deepEqual([anonymous.status, anonymous.code], [401, "unauthorized"]);

  const missing = await match.seats[0].view("00000000-0000-4000-8000-000000000001").catch((e) => e);
  assert.ok(missing instanceof ProblemError);
  assert.ok([403, 404].includes(missing.status), `${missing.status} ${missing.code}`);

  // A refusal the stream cannot mend ends the following with it.
  const followed = await followMatch(BASE, match.id, "not-a-token", { onEvent: () => {} }).catch((e) => e);
  assert.ok(followed instanceof ProblemError && followed.status === 401, String(followed));
});
