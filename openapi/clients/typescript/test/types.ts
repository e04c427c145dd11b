// Type-checked, never run (`npm test` runs tsc on it first): the package as a front end
// imports it (its own name, so the built dist/*.d.ts), used as its README shows.
import {
  createClient,
  followMatch,
  isProblem,
  ProblemError,
  unwrap,
  type Action,
  type GinRummyClient,
  type MatchEvent,
  type MatchEventOf,
  type SeatView,
  type Versioned,
} from "@gin-rummy/client";

export async function readme(): Promise<void> {
  const service = createClient({ baseUrl: "http://localhost:8000" });
  const created = await service.createMatch({
    single_hand: true,
    seats: [{ name: "Ann" }, { name: "Bob" }],
  });
  const matchId: string = created.data.id;
  const ann = service.withToken(created.data.seats[0]?.token ?? undefined);

  let seen: Versioned<SeatView> = await ann.view(matchId);
  const draw: Action | undefined = seen.data.legal_actions.find((a) => a.type === "draw");
  if (draw) {
    const acted = await ann.act(matchId, draw, { ifMatch: seen });
    const view: SeatView = acted.data.view;
    const replayed: boolean = acted.replayed;
    const key: string = acted.idempotencyKey;
    void [view, replayed, key];
    for (const event of acted.data.events) describe(event);
  }

  try {
    await ann.act(matchId, { type: "discard", card: "TD" }, { ifMatch: seen.etag, idempotencyKey: "k" });
  } catch (error) {
    if (isProblem(error, "version_mismatch")) {
      const now: number | undefined = error.currentVersion;
      void now;
      seen = await ann.view(matchId);
    } else if (error instanceof ProblemError && error.status === 409) {
      const rule: string | undefined = error.rule;
      const errors: Record<string, unknown> | undefined = error.errors;
      void [rule, errors, error.code, error.type, error.detail];
    }
  }
  // @ts-expect-error an action is checked: a draw names its source
  await ann.act(matchId, { type: "draw" }, { ifMatch: 3 });
  // @ts-expect-error If-Match is asked for (null: send none)
  await ann.act(matchId, { type: "pass" }, {});

  // The typed openapi-fetch client is there too, with the token sent.
  const page = await ann.GET("/matches/{match_id}/events", { params: { path: { match_id: matchId }, query: { after: 0 } } });
  void page.data?.events;

  const controller = new AbortController();
  const followed = await followMatch(ann, matchId, undefined, {
    signal: controller.signal,
    onEvent: describe,
    onError: (error, { attempt, delayMs }) => void [error, attempt, delayMs],
  });
  const last: number | undefined = followed.lastEventId;
  await followMatch("http://localhost:8000", matchId, "token", { onEvent: describe, lastEventId: last });
}

function describe(event: MatchEvent): string {
  switch (event.type) {
    case "hand_dealt":
      return "cards" in event.data ? event.data.cards.join(" ") + " / " + event.data.upcard : `hand ${event.data.hand}`;
    case "card_drawn": {
      const card: string | undefined = event.data.card; // another seat's stock draw hides it
      return `${event.data.seat} drew ${card ?? "a card"} from the ${event.data.source}`;
    }
    case "knocked":
      return `${event.data.seat} knocked with ${event.data.deadwood}`;
    case "hand_ended":
      return event.schema_version === 2 ? `${event.data.result}: ${event.data.salt}` : `${event.data.result}`;
    case "match_ended":
      return event.schema_version === 2 ? `${event.data.reason}` : `winner ${event.data.winner}`;
    case "hint_shown":
      return "action" in event.data ? event.data.reason : `a hint to ${event.data.seat}`;
    default:
      return event.type;
  }
}

export const ended: MatchEventOf<"match_ended">["type"] = "match_ended";
// @ts-expect-error the data of an event follows its type
export const wrong: MatchEventOf<"card_drawn">["data"]["source"] = "the floor";

// The README's error handling, as written there.
declare function showMessage(text: string): void;
declare function showFieldErrors(errors: Record<string, unknown> | undefined): void;

export async function play(ann: GinRummyClient, matchId: string, choose: (view: SeatView) => Action) {
  let seen = await ann.view(matchId);
  for (let tries = 0; tries < 3; tries++) {
    try {
      return await ann.act(matchId, choose(seen.data), { ifMatch: seen });
    } catch (error) {
      if (isProblem(error, "version_mismatch", "conflict")) {
        seen = await ann.view(matchId);
        continue;
      }
      if (isProblem(error, "illegal_move")) {
        showMessage(error.detail);
        return;
      }
      if (isProblem(error, "invalid_request")) {
        showFieldErrors(error.errors);
        return;
      }
      throw error;
    }
  }
  return undefined;
}

export async function readmeCreate() {
  const service = createClient({ baseUrl: "http://localhost:8000" });
  const created = await service.createMatch({ single_hand: true, seats: [{ name: "Ann" }, { name: "Bob" }] });
  const matchId = created.data.id;
  const ann = service.withToken(created.data.seats[0]!.token!);
  const { data, error } = await ann.GET("/matches/{match_id}/hint", { params: { path: { match_id: matchId } } });
  void [data, error];
  const hint = unwrap(await ann.GET("/matches/{match_id}/hint", { params: { path: { match_id: matchId } } }));
  const reason: string = hint.reason;
  return reason;
}
