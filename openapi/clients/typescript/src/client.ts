// The client: openapi-fetch on the document's paths, with the bearer token sent on every
// request, and the helpers a front end would otherwise write itself: versions read from
// the ETag and sent back as If-Match, an Idempotency-Key per action with retries under the
// same key, and refusals thrown as ProblemError.
import createFetchClient from "openapi-fetch";
import type { Client, Middleware } from "openapi-fetch";

import type { MatchEvent } from "./events.js";
import { ProblemError } from "./problem.js";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
export type SeatView = Schemas["SeatView"];
export type Action = Schemas["Action"];
export type CreateMatch = Schemas["CreateMatch"];
export type MatchCreated = Schemas["MatchCreated"];
export type Join = Schemas["Join"];
export type Joined = Schemas["Joined"];
export type Rematch = Schemas["Rematch"];
/** An event as the document's `Event` schema gives it (its data untyped); MatchEvent types it. */
export type EventJson = Schemas["Event"];
/** An action's answer, its events typed (they are the caller's, redacted for its seat). */
export type ActionResult = Omit<Schemas["ActionResult"], "events"> & { events: MatchEvent[] };

export interface RetryOptions {
  /** Tries in all, the first included (default 4); 1 never retries. */
  attempts?: number;
  /** The first wait when the answer gives no Retry-After, in ms (default 500), doubled at each retry, with jitter. */
  baseDelayMs?: number;
  /** The longest wait before a retry, in ms (default 30 000): past it the error is thrown (its `retryAfter` says when to try). */
  maxDelayMs?: number;
  /** Called before each retry. */
  onRetry?: (retry: { attempt: number; delayMs: number; error: unknown }) => void;
}

export interface ClientOptions {
  /** The service's root URL, e.g. `http://localhost:8000`. */
  baseUrl: string;
  /** The bearer token sent with every request (a seat, player or operator token); `client.token` changes it. */
  token?: string | undefined;
  /** A fetch of your own (tests, instrumentation); default the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The helpers' retries (createMatch, view, act, join, rematch), unless a call says otherwise. */
  retry?: RetryOptions;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Retries of this call (merged over the client's); `false`: none. */
  retry?: RetryOptions | false;
}

export interface IdempotentOptions extends CallOptions {
  /** The action's key: default a new random UUID. Every retry of the call sends the same one. */
  idempotencyKey?: string;
}

export interface ActOptions extends IdempotentOptions {
  /** The state the action was chosen on: sent as If-Match (412 `version_mismatch` when the match moved on); `null` sends none. */
  ifMatch: VersionLike | null;
}

/** A version to send as If-Match: a number, an ETag as it came, or an answer that has one (`Versioned`, a SeatView). */
export type VersionLike = number | string | { etag: string } | { version: number };

/** An answer about a match with its version: `etag` as the service sent it, `version` its number. */
export interface Versioned<T> {
  data: T;
  etag: string;
  version: number;
  response: Response;
}

/** An answer to a request sent with an Idempotency-Key. */
export interface Replayable<T> extends Versioned<T> {
  /** The service answered a retry of a request it had applied already (`Idempotent-Replayed: true`). */
  replayed: boolean;
  idempotencyKey: string;
}

export interface GinRummyClient extends Client<paths> {
  readonly baseUrl: string;
  /** The bearer token sent with each request; an explicit Authorization header wins. */
  token: string | undefined;
  /** The same service and options with another token (one client per seat, say). */
  withToken(token: string | undefined): GinRummyClient;
  /** `POST /matches` (`{}`: a classic match against a medium computer). The seats' tokens are in `data.seats`. */
  createMatch(body?: CreateMatch, options?: CallOptions): Promise<Versioned<MatchCreated>>;
  /** `GET /matches/{id}`: the caller's view and its ETag. */
  view(matchId: string, options?: CallOptions): Promise<Versioned<SeatView>>;
  /** `POST /matches/{id}/actions` with If-Match and an Idempotency-Key, retried under that key. */
  act(matchId: string, action: Action, options: ActOptions): Promise<Replayable<ActionResult>>;
  /** `POST /matches/{id}/join` with an Idempotency-Key, retried under that key. */
  join(matchId: string, body: Join, options?: IdempotentOptions): Promise<Replayable<Joined>>;
  /** `POST /matches/{id}/rematch` with an Idempotency-Key, retried under that key. */
  rematch(matchId: string, options?: IdempotentOptions): Promise<Replayable<Rematch>>;
}

/** A typed client of the service. */
export function createClient(options: ClientOptions): GinRummyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const api = createFetchClient<paths>({
    baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const client = api as GinRummyClient;
  const bearer: Middleware = {
    onRequest({ request }) {
      if (client.token && !request.headers.has("Authorization")) {
        request.headers.set("Authorization", `Bearer ${client.token}`);
      }
      return request;
    },
  };
  api.use(bearer);

  /** How a helper's call is retried: the client's retry options, the call's over them. */
  const how = (call: CallOptions, idempotent: boolean) => ({
    ...(call.retry === false ? { attempts: 1 } : { ...options.retry, ...call.retry }),
    idempotent,
    ...(call.signal ? { signal: call.signal } : {}),
  });
  const keyed = (call: IdempotentOptions) => call.idempotencyKey ?? newIdempotencyKey();

  const helpers: Omit<GinRummyClient, keyof Client<paths>> = {
    baseUrl,
    token: options.token,
    withToken: (token) => createClient({ ...options, token }),

    async createMatch(body = {}, call = {}) {
      const { data, response } = await withRetries(() => api.POST("/matches", { body, signal: call.signal }), how(call, false));
      return versioned(data, response);
    },

    async view(matchId, call = {}) {
      const { data, response } = await withRetries(
        () => api.GET("/matches/{match_id}", { params: { path: { match_id: matchId } }, signal: call.signal }),
        how(call, true),
      );
      return versioned(data, response);
    },

    async act(matchId, action, call) {
      const idempotencyKey = keyed(call);
      const header: { "Idempotency-Key": string; "If-Match"?: string } = { "Idempotency-Key": idempotencyKey };
      if (call.ifMatch !== null) header["If-Match"] = ifMatch(call.ifMatch);
      const { data, response } = await withRetries(
        () => api.POST("/matches/{match_id}/actions", { params: { path: { match_id: matchId }, header }, body: action, signal: call.signal }),
        how(call, true),
      );
      return replayable(data as ActionResult, response, idempotencyKey);
    },

    async join(matchId, body, call = {}) {
      const idempotencyKey = keyed(call);
      const { data, response } = await withRetries(
        () =>
          api.POST("/matches/{match_id}/join", {
            params: { path: { match_id: matchId }, header: { "Idempotency-Key": idempotencyKey } },
            body,
            signal: call.signal,
          }),
        how(call, true),
      );
      return replayable(data, response, idempotencyKey);
    },

    async rematch(matchId, call = {}) {
      const idempotencyKey = keyed(call);
      const { data, response } = await withRetries(
        () =>
          api.POST("/matches/{match_id}/rematch", {
            params: { path: { match_id: matchId }, header: { "Idempotency-Key": idempotencyKey } },
            signal: call.signal,
          }),
        how(call, true),
      );
      return replayable(data, response, idempotencyKey);
    },
  };
  return Object.assign(client, helpers);
}

// --- versions ---------------------------------------------------------------------------

/** The If-Match value for a version: an ETag is sent back as it came; a number is quoted. */
export function ifMatch(seen: VersionLike): string {
  if (typeof seen === "number") return `"${seen}"`;
  if (typeof seen === "string") return /^(W\/)?"/.test(seen) ? seen : `"${seen}"`;
  if ("etag" in seen) return seen.etag;
  return `"${seen.version}"`;
}

/** The version in an ETag: `"12"` and `"12.c"` (a view's, marked with what else changes it) are version 12. */
export function versionOf(etag: string | null | undefined): number | undefined {
  const found = etag ? /^(?:W\/)?"(\d+)(?:\.[^"]*)?"$/.exec(etag.trim()) : null;
  return found ? Number(found[1]) : undefined;
}

function bodyVersion(data: unknown): number | undefined {
  const body = data as { version?: unknown; view?: { version?: unknown } } | null;
  const version = body?.version ?? body?.view?.version;
  return typeof version === "number" ? version : undefined;
}

/** An answer with its version. A page on another origin reads the ETag only where the service's
 * CORS exposes it (it does); without one the body's version stands in. */
export function versioned<T>(data: T, response: Response): Versioned<T> {
  const header = response.headers.get("ETag");
  const version = versionOf(header) ?? bodyVersion(data);
  if (version === undefined) throw new TypeError(`the answer of ${response.url} carries no version`);
  return { data, etag: header ?? `"${version}"`, version, response };
}

function replayable<T>(data: T, response: Response, idempotencyKey: string): Replayable<T> {
  return { ...versioned(data, response), replayed: response.headers.get("Idempotent-Replayed") === "true", idempotencyKey };
}

// --- idempotency and retries ------------------------------------------------------------

/** A new Idempotency-Key: a random UUID (crypto.randomUUID, or getRandomValues where a page is not a secure context). */
export function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The shape of an openapi-fetch answer. */
export type FetchResult = { data?: unknown; error?: unknown; response: Response };
type Answered<R extends FetchResult> = { data: NonNullable<R["data"]>; response: Response };

/** The data of a 2xx answer; any other answer thrown as a ProblemError. */
export function unwrap<R extends FetchResult>(result: R): NonNullable<R["data"]> {
  if (!result.response.ok || result.error !== undefined) throw ProblemError.fromAnswer(result.error, result.response);
  return result.data as NonNullable<R["data"]>;
}

/** Codes of a refusal before anything was done: retried even without an Idempotency-Key. */
const NOTHING_DONE = new Set(["busy", "shutting_down", "database_unavailable", "service_unavailable", "service_unreachable"]);

function retriable(error: unknown, idempotent: boolean): boolean {
  if (error instanceof ProblemError) {
    if (error.status === 429 || NOTHING_DONE.has(error.code)) return true;
    return idempotent && [502, 503, 504].includes(error.status);
  }
  return idempotent && error instanceof TypeError; // fetch's network failure: the answer (if any) was lost
}

/**
 * Send `request` (an openapi-fetch call) until it is answered 2xx, and answer that;
 * throw the last ProblemError otherwise. A 429, or a 503 naming a refusal before anything
 * was done, is retried after its Retry-After; with `idempotent` (a GET, or a request with an
 * Idempotency-Key: repeat it with the same key) a 502/503/504 or a network failure is too,
 * with exponential backoff.
 */
export async function withRetries<R extends FetchResult>(
  request: (attempt: number) => Promise<R>,
  options: RetryOptions & { idempotent?: boolean; signal?: AbortSignal } = {},
): Promise<Answered<R>> {
  const { attempts = 4, baseDelayMs = 500, maxDelayMs = 30_000, idempotent = false, signal, onRetry } = options;
  for (let attempt = 1; ; attempt++) {
    let error: unknown;
    try {
      const result = await request(attempt);
      return { data: unwrap(result), response: result.response };
    } catch (caught) {
      error = caught;
    }
    if (signal?.aborted || attempt >= attempts || !retriable(error, idempotent)) throw error;
    const after = error instanceof ProblemError ? error.retryAfter : undefined;
    const delayMs = after !== undefined ? after * 1000 : baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
    if (delayMs > maxDelayMs) throw error;
    onRetry?.({ attempt, delayMs, error });
    await sleep(delayMs, signal);
  }
}

/** Wait `ms`; rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
