// A match's events, typed by their `type` and `schema_version` from the document's
// event schemas (components.schemas.MatchRecordEvent: the events of a match record),
// as a seat sees them: the service redacts a few for the seat that reads them.
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** A card code: rank (A 2-9 T J Q K) and suit (C D H S), e.g. `TD`. */
export type Card = Schemas["MatchRecordCard"];
/** A seat: 0 or 1. */
export type Seat = Schemas["MatchRecordSeat"];

/** An event of a match record, typed by `type` and `schema_version`, unredacted (a record, the operator's stream). */
export type RecordEvent = Schemas["MatchRecordEvent"];
/** The event types the document knows. */
export type MatchEventType = RecordEvent["type"];

/** `hand_dealt` as a seat sees it: its own ten cards and the upcard, the deck kept back until the hand ends. */
export interface HandDealtSeen {
  hand: number;
  starter: Seat;
  /** SHA-256 of the salt, a colon and the deck's codes joined by commas: checked once hand_ended reveals them. */
  commitment: string;
  cards: Card[];
  upcard: Card;
}

/** `hint_shown` as the other seat sees it: only that a hint was shown, and to whom. */
export interface HintShownToOther {
  seat: Seat;
}

/**
 * The redactions of the service (`GET .../events`, `.../stream` and action answers, for a
 * seat): `hand_dealt` gives the seat its cards instead of the deck, `card_drawn` from the
 * stock hides the card from the other seat, `hint_shown` tells the other seat only who was
 * shown one, `match_started` leaves out a computer's seed (optional already). The operator
 * sees the record's events as they are.
 */
type SeenBySeat<E> = E extends { type: "hand_dealt"; data: infer D }
  ? Omit<E, "data"> & { data: D | HandDealtSeen }
  : E extends { type: "card_drawn"; data: infer D }
    ? Omit<E, "data"> & { data: Omit<D, "card"> & { card?: Card } }
    : E extends { type: "hint_shown"; data: infer D }
      ? Omit<E, "data"> & { data: D | HintShownToOther }
      : E;

/**
 * A match event as the API answers it to a seat: narrow it by `type` (and, where the
 * document has several, `schema_version`), and its `data` is typed.
 *
 * ```ts
 * if (event.type === "card_drawn" && event.data.card) show(event.data.card);
 * ```
 */
export type MatchEvent = SeenBySeat<RecordEvent>;

/** The events of one type. */
export type MatchEventOf<T extends MatchEventType> = Extract<MatchEvent, { type: T }>;
