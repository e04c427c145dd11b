// The text/event-stream parser, on its own (no service needed).
import assert from "node:assert/strict";
import { test } from "node:test";

import { SseParser } from "@gin-rummy/client";

/** Parse `pieces` fed one after the other; answers what the parser reported. */
function parse(...pieces) {
  const seen = { messages: [], comments: [], retries: [] };
  const parser = new SseParser({
    message: (m) => seen.messages.push(m),
    comment: (c) => seen.comments.push(c),
    retry: (ms) => seen.retries.push(ms),
  });
  for (const piece of pieces) parser.push(piece);
  seen.parser = parser;
  return seen;
}

test("the service's frames: retry, then id, event and data per event, and keep-alive comments", () => {
  const { messages, comments, retries, parser } = parse(
    "retry: 1000\n\n",
    'id: 1\nevent: match_started\ndata: {"seq":1}\n\n',
    ": keep-alive\n\n",
    'id: 2\nevent: hand_dealt\ndata: {"seq":2}\n\n',
  );
  assert.deepEqual(retries, [1000]);
  assert.deepEqual(comments, ["keep-alive"]);
  assert.deepEqual(messages, [
    { id: "1", event: "match_started", data: '{"seq":1}' },
    { id: "2", event: "hand_dealt", data: '{"seq":2}' },
  ]);
  assert.equal(parser.lastEventId, "2");
});

test("pieces of any size: an event split anywhere, a CRLF split between its CR and its LF", () => {
  const text = 'id: 7\r\nevent: card_drawn\r\ndata: {"seq":7}\r\n\r\nid: 8\rdata: x\r\r';
  for (let size = 1; size <= text.length; size++) {
    const pieces = [];
    for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
    const { messages } = parse(...pieces);
    assert.deepEqual(
      messages,
      [
        { id: "7", event: "card_drawn", data: '{"seq":7}' },
        { id: "8", event: "message", data: "x" },
      ],
      `pieces of ${size}`,
    );
  }
});

test("data lines join with newlines; a space after the colon is dropped once; a field without a colon is empty", () => {
  const { messages } = parse("data:  two spaces\ndata\ndata:last\n\n");
  assert.deepEqual(messages, [{ id: "", event: "message", data: " two spaces\n\nlast" }]);
});

test("no event without data; an id carries over; an id with U+0000, a bad retry and unknown fields are ignored", () => {
  const { messages, retries, parser } = parse(
    "id: 3\nevent: ignored\n\n",
    "data: a\n\n",
    "id: 4\u0000\nretry: 1s\nfoo: bar\ndata: b\n\n",
  );
  assert.deepEqual(messages, [
    { id: "3", event: "message", data: "a" },
    { id: "3", event: "message", data: "b" },
  ]);
  assert.deepEqual(retries, []);
  assert.equal(parser.lastEventId, "3");
});

test("a leading BOM is skipped; an event cut off by the end of the stream is dropped and moves no id", () => {
  const { messages, parser } = parse("\uFEFFid: 1\ndata: one\n\nid: 2\ndata: tw");
  parser.end();
  assert.deepEqual(messages, [{ id: "1", event: "message", data: "one" }]);
  assert.equal(parser.lastEventId, "1");
});

test("comments: with or without a space after the colon", () => {
  const { comments, messages } = parse(":x\n: too far behind: reconnect with Last-Event-ID\n\n");
  assert.deepEqual(comments, ["x", "too far behind: reconnect with Last-Event-ID"]);
  assert.deepEqual(messages, []);
});
