// Calling Context Compact from TypeScript with the generated client in clients/typescript
// (types from openapi.yaml, openapi-fetch underneath). An agent asks before each model
// call and compacts when told.
//
//   python -m app serve &
//   cd clients/typescript && npm ci && npx tsx ../../examples/client.ts

import {
  type AnyMessage,
  createClient,
  unwrap,
} from "../clients/typescript/src/index.js";
import type { Schemas } from "../clients/typescript/src/index.js";

const client = createClient(process.env.COMPACT_URL, { token: process.env.COMPACT_API_TOKEN });

// Before each model call: ask, and compact the history when told (before appending the new input).
export async function beforeModelCall(
  messages: AnyMessage[],
  lastUsage: Schemas["Usage"] | undefined,
  nextInput: string,
): Promise<AnyMessage[]> {
  const decision = unwrap(
    await client.POST("/should-compact", {
      body: { messages, last_usage: lastUsage, pending_input: nextInput },
    }),
  );
  if (!decision.should_compact) return messages;
  const result = unwrap(
    await client.POST("/compact", { body: { messages, session_id: "ts-example", force: true } }),
  );
  return result.compacted ? result.messages : messages;
}

async function main(): Promise<void> {
  const messages: AnyMessage[] = [
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
