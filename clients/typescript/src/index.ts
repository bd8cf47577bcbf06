// A typed client for Context Compact: openapi-fetch over the types openapi-typescript
// generates from openapi.yaml (`npm run generate` writes src/schema.d.ts; CI checks that it
// is up to date). Request fields the server defaults are optional, as in the spec.
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
export type Schemas = components["schemas"];
export type AnyMessage = Schemas["AnyMessage"];
export type ErrorResponse = Schemas["ErrorResponse"];
export type ContextCompactClient = Client<paths>;

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

export interface ClientOptions {
  /** Sent as `Authorization: Bearer <token>` (servers that set COMPACT_API_TOKEN). */
  token?: string;
  /** A fetch of your own (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

/** A client for every route: `client.POST("/count", { body: { messages } })` answers
 * `{ data }` (the typed 2xx body) or `{ error }` (an `ErrorResponse`). */
export function createClient(
  baseUrl: string = DEFAULT_BASE_URL,
  options: ClientOptions = {},
): ContextCompactClient {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  return createFetchClient<paths>({
    baseUrl,
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** An error answer as an exception, for callers who prefer `throw` to `{ error }`. */
export class ContextCompactError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorResponse,
  ) {
    super(`${status} ${body.error}: ${body.message}`);
    this.name = "ContextCompactError";
  }
}

/** The data of an answer, or a `ContextCompactError` thrown for an error answer. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data !== undefined) return answer.data;
  throw new ContextCompactError(answer.response.status, answer.error as ErrorResponse);
}
