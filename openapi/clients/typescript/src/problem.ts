// Errors as the service answers them: `application/problem+json` (RFC 9457) with a
// stable `code`, thrown as a ProblemError.
import type { components } from "./schema.js";

/** The service's problem document (`components.schemas.Problem`). */
export type Problem = components["schemas"]["Problem"];

/**
 * A refusal by the service (or the proxy in front of it): the problem document's members
 * as fields. `code` is stable and is what a program branches on (`illegal_move`,
 * `conflict`, `version_mismatch`, `invalid_request`...); `detail` is for people.
 *
 * An answer that is not a problem document (a proxy's HTML page, say) becomes a
 * ProblemError too, with code `unexpected_response` and the status it came with.
 */
export class ProblemError extends Error {
  override readonly name = "ProblemError";
  /** The HTTP status (409, 412, 422...). */
  readonly status: number;
  /** The stable machine-readable code, e.g. `illegal_move`. */
  readonly code: string;
  /** The problem type's URI (the catalogue entry of the code, under /problems/). */
  readonly type: string;
  readonly title: string;
  /** What went wrong, for people. */
  readonly detail: string;
  /** The game rule broken (`illegal_move`: e.g. `wrong_phase`, `no_return`). */
  readonly rule: string | undefined;
  /** `invalid_request`: field name -> messages. */
  readonly errors: Record<string, unknown> | undefined;
  /** `version_mismatch`: the match's version now. */
  readonly currentVersion: number | undefined;
  /** The Retry-After header, in seconds (429, 503), when the answer has one. */
  readonly retryAfter: number | undefined;
  /** The answer's ETag (a 412 carries the match's current one). */
  readonly etag: string | undefined;
  /** The problem document as it came, members the fields above leave out included. */
  readonly problem: Problem & Record<string, unknown>;
  /** The HTTP response (its body already read), when there was one. */
  readonly response: Response | undefined;

  constructor(problem: Problem & Record<string, unknown>, response?: Response) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.problem = problem;
    this.response = response;
    this.status = problem.status;
    this.code = problem.code;
    this.type = problem.type ?? "about:blank";
    this.title = problem.title ?? "";
    this.detail = problem.detail ?? "";
    this.rule = problem.rule;
    this.errors = problem.errors;
    this.currentVersion = problem.current_version;
    this.retryAfter = response ? retryAfterSeconds(response.headers.get("Retry-After")) : undefined;
    this.etag = response?.headers.get("ETag") ?? undefined;
  }

  /** The error of an answer that is not 2xx: `body` as openapi-fetch read it (parsed JSON, or text). */
  static fromAnswer(body: unknown, response: Response): ProblemError {
    if (isProblemDocument(body)) return new ProblemError(body, response);
    const text = typeof body === "string" ? body.trim().slice(0, 500) : "";
    return new ProblemError(
      {
        type: "about:blank",
        title: response.statusText || `HTTP ${response.status}`,
        status: response.status,
        code: "unexpected_response",
        detail: text || `the answer is HTTP ${response.status} without a problem document`,
      },
      response,
    );
  }

  /** Read a response that is not 2xx (its body not read yet) as a ProblemError. */
  static async fromResponse(response: Response): Promise<ProblemError> {
    let body: unknown = await response.text().catch(() => "");
    try {
      body = JSON.parse(body as string);
    } catch {
      // not JSON: kept as text
    }
    return ProblemError.fromAnswer(body, response);
  }
}

/** Whether `error` is a ProblemError (with one of these codes, when given). */
export function isProblem(error: unknown, ...codes: string[]): error is ProblemError {
  return error instanceof ProblemError && (codes.length === 0 || codes.includes(error.code));
}

function isProblemDocument(body: unknown): body is Problem & Record<string, unknown> {
  if (typeof body !== "object" || body === null) return false;
  const { status, code } = body as Record<string, unknown>;
  return typeof status === "number" && typeof code === "string";
}

/** A Retry-After header (delay-seconds or an HTTP date) in seconds; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null | undefined, now: number = Date.now()): number | undefined {
  if (header == null || header.trim() === "") return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
