// Calling Context Compact from TypeScript with fetch (Node 18+, Deno, Bun, browsers).
// Types cover the fields this snippet uses; openapi.yaml has the full schema.
//
//   python -m app serve &
//   npx tsx examples/client.ts

const BASE = process.env.COMPACT_URL ?? "http://127.0.0.1:8080";

type Role = "system" | "user" | "assistant";
type Block = { type: string; [field: string]: unknown };
export type Message = { role: Role | "tool" | "developer"; content: string | Block[] | null; [field: string]: unknown };

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface ShouldCompactRequest {
  messages: Message[];
  last_usage?: Usage;
  pending_input?: string;
  context_window?: number;
  threshold?: number;
}

export interface ShouldCompactResponse {
  should_compact: boolean;
  overflow: boolean;
  reason: "below_min_messages" | "below_threshold" | "above_threshold" | "overflow";
  token_count: number;
  token_source: "counted" | "last_usage";
  threshold_tokens: number;
  context_window: number;
}

export interface CompactRequest {
  messages: Message[];
  format?: "auto" | "anthropic" | "openai";
  session_id?: string;
  force?: boolean;
  instructions?: string;
  options?: { strategy?: string; max_restore_files?: number; read_tools?: string[] };
}

export interface CompactResponse {
  compacted: boolean;
  format: "anthropic" | "openai";
  reason: string | null;
  messages: Message[];
  summary: string | null;
  token_count: number;
  stats: { original_token_count: number; compacted_token_count: number; compaction_ratio: number } | null;
  archive: { id: string; session_id: string | null; message_count: number; sha256: string } | null;
  warnings: string[];
}

export interface ErrorResponse {
  error: string;
  message: string;
  details: { field: string | null; message: string }[];
}

export class ContextCompactError extends Error {
  constructor(readonly status: number, readonly body: ErrorResponse) {
    super(`${status} ${body.error}: ${body.message}`);
  }
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const data: unknown = await response.json();
  if (!response.ok) throw new ContextCompactError(response.status, data as ErrorResponse);
  return data as T;
}

export const shouldCompact = (request: ShouldCompactRequest) =>
  post<ShouldCompactResponse>("/should-compact", request);

export const compact = (request: CompactRequest) => post<CompactResponse>("/compact", request);

// Before each model call: ask, and compact the history when told (before appending the new input).
export async function beforeModelCall(
  messages: Message[],
  lastUsage: Usage | undefined,
  nextInput: string,
): Promise<Message[]> {
  const decision = await shouldCompact({ messages, last_usage: lastUsage, pending_input: nextInput });
  if (!decision.should_compact) return messages;
  const result = await compact({ messages, session_id: "ts-example", force: true });
  return result.compacted ? result.messages : messages;
}

async function main(): Promise<void> {
  const messages: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing test." },
    { role: "assistant", content: "Done: the test passes." },
  ];
  const next = await beforeModelCall(messages, { input_tokens: 170_000 }, "Now run the suite.");
  console.log(`${messages.length} messages -> ${next.length} messages`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
