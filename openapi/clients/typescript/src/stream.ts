// Following a match live: `GET /matches/{id}/stream`, Server-Sent Events read over fetch
// (a browser's EventSource cannot send the bearer token), resumed with Last-Event-ID
// after every close or drop, with backoff, until the match ends or the signal aborts.
import { createClient, sleep } from "./client.js";
import type { GinRummyClient } from "./client.js";
import type { MatchEvent } from "./events.js";
import { ProblemError } from "./problem.js";

// --- the text/event-stream format ---------------------------------------------------------

/** One event of a stream, as the format dispatches it. */
export interface SseMessage {
  /** The last event id at this event (the `id:` field's, carried over from earlier events when it has none). */
  id: string;
  /** The `event:` field; `message` when there is none. */
  event: string;
  /** The `data:` lines joined by newlines. */
  data: string;
}

export interface SseHandlers {
  message(message: SseMessage): void;
  /** A comment line (`: keep-alive`), without its colon and a space after it. */
  comment?(text: string): void;
  /** A `retry:` field: the reconnection time the server asks for, in ms. */
  retry?(ms: number): void;
}

/**
 * An incremental parser of `text/event-stream` (the HTML standard's rules): feed it the
 * decoded text as it comes, in pieces of any size. Lines end in CRLF, LF or CR; a blank
 * line dispatches the event gathered so far (none without data); `id:` sets the last event
 * id (one holding U+0000 is ignored), `retry:` the reconnection time (digits only);
 * unknown fields are ignored; a leading BOM is skipped. An event cut off by the end of the
 * stream (no blank line after it) is dropped, and does not move `lastEventId`.
 */
export class SseParser {
  /** The id of the last event dispatched: what Last-Event-ID resumes after. */
  lastEventId = "";
  private idBuffer = "";
  private eventType = "";
  private data = "";
  private hasData = false;
  private pending = "";
  private started = false;
  private skipNewline = false;

  constructor(private readonly handlers: SseHandlers) {}

  push(text: string): void {
    if (!this.started) {
      if (text === "") return;
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipNewline && text !== "") {
      this.skipNewline = false;
      if (text[0] === "\n") text = text.slice(1);
    }
    const buffer = this.pending + text;
    let start = 0;
    const ends = /\r\n|\r|\n/g;
    for (let found = ends.exec(buffer); found; found = ends.exec(buffer)) {
      if (found[0] === "\r" && found.index === buffer.length - 1) this.skipNewline = true; // its \n may come next
      this.line(buffer.slice(start, found.index));
      start = found.index + found[0].length;
    }
    this.pending = buffer.slice(start);
  }

  /** The stream ended: an event not finished by a blank line is dropped. */
  end(): void {
    this.pending = "";
    this.data = "";
    this.hasData = false;
    this.eventType = "";
    this.idBuffer = this.lastEventId;
    this.skipNewline = false;
  }

  private line(line: string): void {
    if (line === "") return this.dispatch();
    if (line[0] === ":") {
      this.handlers.comment?.(line.slice(line[1] === " " ? 2 : 1));
      return;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data += this.hasData ? `\n${value}` : value;
        this.hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) this.idBuffer = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.handlers.retry?.(Number(value));
        break;
      default:
        break;
    }
  }

  private dispatch(): void {
    this.lastEventId = this.idBuffer;
    if (this.hasData) this.handlers.message({ id: this.lastEventId, event: this.eventType || "message", data: this.data });
    this.data = "";
    this.hasData = false;
    this.eventType = "";
  }
}

// --- following a match ---------------------------------------------------------------------

export interface FollowOptions {
  /** Each event, once and in order (its `seq`); an answer's promise is awaited before the next. */
  onEvent(event: MatchEvent): unknown;
  /** A failure the follower recovers from (a dropped connection, a 5xx, a 429): it reconnects after `delayMs`. */
  onError?(error: unknown, retry: { attempt: number; delayMs: number }): void;
  /** Each connection opened (200), with the event id it resumes after. */
  onOpen?(connection: { number: number; lastEventId: number | undefined }): void;
  /** Each comment line (`keep-alive`; `too far behind: reconnect with Last-Event-ID`). */
  onComment?(text: string): void;
  /** Stops following: the promise then resolves (`aborted: true`). */
  signal?: AbortSignal;
  /** Start after this event (its seq): what a follower that stopped got last. Default: from the first event. */
  lastEventId?: number | string;
  /** How long the service holds each connection open, in seconds (its default 30, at most 3600). */
  wait?: number;
  /** Resolve once `match_ended` arrives (the service closes the stream after it). Default true. */
  stopAtMatchEnd?: boolean;
  /** The first wait before reconnecting after a failure, in ms: default the stream's `retry:` (1000). */
  initialDelayMs?: number;
  /** The longest wait between reconnections, in ms (default 30 000). */
  maxDelayMs?: number;
  /** Give up after this many failures in a row (default: never): the promise rejects with the last one. */
  maxFailures?: number;
  /** A connection silent this long (no event, no keep-alive) is dropped and reopened, in ms (default 45 000). */
  idleTimeoutMs?: number;
}

export interface FollowResult {
  /** The seq of the last event delivered: pass it as `lastEventId` to continue. */
  lastEventId: number | undefined;
  /** `match_ended` arrived. */
  ended: boolean;
  /** The signal stopped the follower. */
  aborted: boolean;
}

/** A connection that ended without an error, too soon to be a normal close, or went silent. */
class Quiet extends Error {
  override readonly name = "StreamQuiet";
}

/** A failure that ends the following: not retried. */
class Fatal extends Error {
  constructor(readonly error: unknown) {
    super("fatal");
  }
}

/**
 * Follow a match live: calls `onEvent` with each event after `lastEventId`, reconnecting
 * with Last-Event-ID whenever a connection closes (the service closes each after `wait`
 * seconds, or when the follower falls too far behind) or drops, backing off
 * exponentially after failures, until `match_ended` arrives or `signal` aborts (then it
 * resolves). It rejects on a refusal that a retry cannot mend (401, 403, 404, 422: a
 * ProblemError), with what `onEvent` throws, or after `maxFailures` failures in a row.
 *
 * `client` is a client (its token is used unless `token` is given) or the service's base URL.
 */
export async function followMatch(
  client: GinRummyClient | string,
  matchId: string,
  token: string | undefined,
  options: FollowOptions,
): Promise<FollowResult> {
  const api =
    typeof client === "string" ? createClient({ baseUrl: client, token }) : token === undefined ? client : client.withToken(token);
  const { signal, onEvent, stopAtMatchEnd = true, maxDelayMs = 30_000, maxFailures = Infinity, idleTimeoutMs = 45_000 } = options;
  let lastEventId = options.lastEventId === undefined ? undefined : Number(options.lastEventId);
  let retryMs = options.initialDelayMs ?? 1000;
  let failures = 0;
  const finish = (ended: boolean): FollowResult => ({ lastEventId, ended, aborted: !ended && Boolean(signal?.aborted) });

  for (let number = 1; !signal?.aborted; number++) {
    const connection = new AbortController();
    const stop = () => connection.abort(signal?.reason);
    signal?.addEventListener("abort", stop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Quiet(`no event nor keep-alive for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    };
    const opened = Date.now();
    let failure: unknown;
    try {
      watch();
      const { data: body, error, response } = await api.GET("/matches/{match_id}/stream", {
        params: {
          path: { match_id: matchId },
          query: options.wait === undefined ? {} : { wait: options.wait },
          header: lastEventId === undefined ? {} : { "Last-Event-ID": String(lastEventId) },
        },
        headers: { Accept: "text/event-stream" },
        parseAs: "stream",
        signal: connection.signal,
      });
      if (!response.ok) {
        const problem = ProblemError.fromAnswer(error, response);
        throw problem.status === 429 || problem.status >= 500 ? problem : new Fatal(problem);
      }
      if (!body || !(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
        throw new Fatal(
          new ProblemError(
            {
              type: "about:blank", title: "Not a stream", status: response.status, code: "unexpected_response",
              detail: `the stream answered ${response.headers.get("Content-Type") ?? "without a Content-Type"}, not text/event-stream`,
            },
            response,
          ),
        );
      }
      options.onOpen?.({ number, lastEventId });
      const messages: SseMessage[] = [];
      const parser = new SseParser({
        message: (message) => messages.push(message),
        comment: (text) => options.onComment?.(text),
        retry: (ms) => {
          if (options.initialDelayMs === undefined) retryMs = ms;
        },
      });
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      let delivered = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          watch();
          parser.push(value);
          for (const message of messages.splice(0)) {
            if (signal?.aborted) return finish(false);
            let event: MatchEvent;
            try {
              event = JSON.parse(message.data) as MatchEvent;
              await onEvent(event);
            } catch (thrown) {
              throw new Fatal(thrown); // not JSON (not this service's stream), or onEvent's own error
            }
            lastEventId = event.seq;
            delivered++;
            failures = 0;
            if (stopAtMatchEnd && event.type === "match_ended") return finish(true);
          }
        }
      } finally {
        reader.cancel().catch(() => undefined);
      }
      // A normal close (`wait` over, or too far behind): resume at once. One at once after
      // opening, with nothing in it (an instance shutting down), is waited on like a failure.
      if (delivered > 0 || Date.now() - opened >= retryMs) continue;
      failure = new Quiet("the stream closed at once, without an event");
    } catch (caught) {
      if (caught instanceof Fatal) throw caught.error;
      if (signal?.aborted) break;
      failure = connection.signal.reason instanceof Quiet ? connection.signal.reason : caught;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener("abort", stop);
      connection.abort();
    }
    failures++;
    if (failures >= maxFailures) throw failure;
    const retryAfter = failure instanceof ProblemError ? failure.retryAfter : undefined;
    const delayMs =
      retryAfter !== undefined ? retryAfter * 1000 : Math.min(maxDelayMs, retryMs * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
    options.onError?.(failure, { attempt: failures, delayMs });
    try {
      await sleep(delayMs, signal);
    } catch {
      break; // aborted while waiting
    }
  }
  return finish(false);
}
