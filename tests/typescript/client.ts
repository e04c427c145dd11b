// A third party's client, typed from the OpenAPI document alone (openapi-typescript
// generates generated/schema.d.ts; openapi-fetch calls the API with those types).
// tests/api/test_openapi_typescript.py type-checks it (tsc --noEmit); it is never run.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/schema";

type Action = components["schemas"]["Action"];
type SeatView = components["schemas"]["SeatView"];
type MatchRecord = components["schemas"]["MatchRecord"];
type Problem = components["schemas"]["Problem"];

const api = createClient<paths>({ baseUrl: "http://localhost:8000" });

function fail(problem: Problem): never {
  throw new Error(`${problem.status} ${problem.code}: ${problem.detail}`);
}

/** Create a match against the computer and make the first move; answers the new view. */
export async function firstMove(): Promise<SeatView> {
  const created = await api.POST("/matches", {
    body: {
      rules: { preset: "classic" },
      single_hand: true,
      seats: [{ name: "Ann", kind: "human" }, { kind: "computer", level: "hard" }],
    },
  });
  if (created.error) fail(created.error);
  const match = created.data;
  const token = match.seats[0]?.token;
  if (!token) throw new Error("the human seat has no token");
  const headers = { Authorization: `Bearer ${token}` };

  // Any legal action is a complete body, posted as is.
  const action: Action | undefined = match.view.legal_actions.find((a) => a.type === "draw");
  if (!action) throw new Error("no draw on offer");
  const acted = await api.POST("/matches/{match_id}/actions", {
    params: { path: { match_id: match.id }, header: { "If-Match": `"${match.view.version}"` } },
    headers,
    body: action,
  });
  if (acted.error) fail(acted.error);
  const { view, events } = acted.data;
  console.log(events.map((e) => e.type).join(", "), view.hand.length, view.deadwood);

  // An action built by hand is checked too: a draw names its source...
  const draw: Action = { type: "draw", source: "stock" };
  // @ts-expect-error ...and the source is the stock or the discard pile.
  const wrong: Action = { type: "draw", source: "the floor" };
  void draw;
  void wrong;
  return view;
}

/** A finished match's record: its events typed by their type (the record's schema is in the document). */
export async function cardsDrawn(matchId: string, token: string): Promise<string[]> {
  const exported = await api.GET("/matches/{match_id}/export", {
    params: { path: { match_id: matchId } },
    headers: { Authorization: `Bearer ${token}` },
  });
  if (exported.error) fail(exported.error);
  const record = exported.data as MatchRecord;
  const drawn: string[] = [];
  for (const event of record.events) {
    if (event.type === "card_drawn" && event.data.card) drawn.push(event.data.card);
  }
  console.log(record.digest, record.result.status);
  return drawn;
}

// The response headers are in the contract, so a generated client names them: a
// header the document stopped declaring fails this check.
type Responses<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R } ? R : never;
type CreatedHeaders = Responses<"/matches", "post">[201]["headers"];
type ActedHeaders = Responses<"/matches/{match_id}/actions", "post">[200]["headers"];
type LimitedHeaders = Responses<"/matches", "post">[429]["headers"];
export const headersRead: {
  location: CreatedHeaders["Location"];
  etag: ActedHeaders["ETag"];
  replayed: ActedHeaders["Idempotent-Replayed"];
  rateLimit: ActedHeaders["RateLimit"];
  policy: ActedHeaders["RateLimit-Policy"];
  retryAfter: LimitedHeaders["Retry-After"];
  requestId: ActedHeaders["X-Request-Id"];
} = {
  location: "/matches/0b6f…",
  etag: '"12"',
  replayed: "true",
  rateLimit: '"address";r=2987;t=1, "token";r=288;t=1',
  policy: '"address";q=3000;w=3, "token";q=300;w=3',
  retryAfter: "2",
  requestId: "7f3c…",
};

