// @gin-rummy/client: a typed client of the Gin Rummy service (its OpenAPI document's
// types, generated into schema.d.ts by openapi-typescript; requests by openapi-fetch).
export {
  createClient,
  ifMatch,
  newIdempotencyKey,
  sleep,
  unwrap,
  versioned,
  versionOf,
  withRetries,
} from "./client.js";
export type {
  Action,
  ActionResult,
  ActOptions,
  CallOptions,
  ClientOptions,
  CreateMatch,
  EventJson,
  FetchResult,
  GinRummyClient,
  IdempotentOptions,
  Join,
  Joined,
  MatchCreated,
  Rematch,
  Replayable,
  RetryOptions,
  SeatView,
  Versioned,
  VersionLike,
} from "./client.js";
export type { Card, HandDealtSeen, HintShownToOther, MatchEvent, MatchEventOf, MatchEventType, RecordEvent, Seat } from "./events.js";
export { isProblem, ProblemError, retryAfterSeconds } from "./problem.js";
export type { Problem } from "./problem.js";
export type { components, operations, paths } from "./schema.js";
export { followMatch, SseParser } from "./stream.js";
export type { FollowOptions, FollowResult, SseHandlers, SseMessage } from "./stream.js";
