// An agent loop in TypeScript with the generated client in clients/typescript (types from
// openapi.yaml, openapi-fetch underneath): before each model call it asks whether to
// compact and compacts when told (before appending the new input); after each compaction
// the stand-in model asks `recall` once, answered from the session's archives.
//
//   context-compact serve &
//   cd clients/typescript && npm ci && npx tsx ../../examples/client.ts
//
// The address and token come from COMPACT_URL and COMPACT_API_TOKEN, as for the server.
// The stand-in model writes long replies into a small window (DEMO_WINDOW), so the demo
// compacts every few turns; it exits 1 unless it compacted twice and recalled once.

import {
  type AnyMessage,
  createClient,
  unwrap,
} from "../clients/typescript/src/index.js";
import type { Schemas } from "../clients/typescript/src/index.js";

const client = createClient(process.env.COMPACT_URL, { token: process.env.COMPACT_API_TOKEN });
const SESSION_ID = "ts-example";
const DEMO_WINDOW = 4_000;
const DEMO_TURNS = 24;

type Usage = Schemas["Usage"];
type Reply = { message: AnyMessage; usage: Usage };

// Before each model call: ask, and compact the history when told.
export async function beforeModelCall(
  messages: AnyMessage[],
  lastUsage: Usage | undefined,
  nextInput: string,
  contextWindow?: number,
): Promise<{ messages: AnyMessage[]; compacted: boolean }> {
  const decision = unwrap(
    await client.POST("/should-compact", {
      body: {
        messages,
        last_usage: lastUsage,
        pending_input: nextInput,
        context_window: contextWindow,
      },
    }),
  );
  if (!decision.should_compact) return { messages, compacted: false };
  const result = unwrap(
    await client.POST("/compact", { body: { messages, session_id: SESSION_ID, force: true } }),
  );
  return result.compacted
    ? { messages: result.messages, compacted: true }
    : { messages, compacted: false };
}

// Answers the model's `recall` call from the session's archives.
async function recall(query: string): Promise<string> {
  const found = unwrap(
    await client.POST("/sessions/{session_id}/recall", {
      params: { path: { session_id: SESSION_ID } },
      body: { query },
    }),
  );
  if (found.hits.length === 0) return "No archived message matches.";
  return found.hits.map((hit) => `[archive ${hit.archive_id}] ${hit.snippet}`).join("\n\n");
}

function size(messages: AnyMessage[]): number {
  return messages.reduce((total, m) => total + JSON.stringify(m.content ?? "").length, 0);
}

// Replace with your LLM call: a long reply each turn; after a compaction, one recall call.
function demoModel(messages: AnyMessage[], recallDue: boolean): Reply {
  const usage = { input_tokens: Math.floor(size(messages) / 4), output_tokens: 300 };
  if (recallDue) {
    const call = { type: "tool_use", id: "recall-1", name: "recall", input: { query: "Step 1" } };
    return { message: { role: "assistant", content: [call] } as AnyMessage, usage };
  }
  const text = `Turn ${messages.length} done: edited src/app.py and ran the tests. `.repeat(24);
  return { message: { role: "assistant", content: text }, usage };
}

async function main(): Promise<void> {
  let messages: AnyMessage[] = [{ role: "system", content: "You are a coding agent." }];
  let usage: Usage | undefined;
  const compactedAt: number[] = [];
  const recalled: string[] = [];
  for (let turn = 0; turn < DEMO_TURNS; turn++) {
    const input = `Step ${turn}: keep going.`;
    const before = await beforeModelCall(messages, usage, input, DEMO_WINDOW);
    messages = before.messages;
    if (before.compacted) {
      compactedAt.push(turn);
      usage = undefined; // the last usage measured the old list
    }
    messages.push({ role: "user", content: input });
    let reply = demoModel(messages, before.compacted);
    messages.push(reply.message);
    if (Array.isArray(reply.message.content)) {
      const answer = await recall("Step 1");
      recalled.push("Step 1");
      const result = { type: "tool_result", tool_use_id: "recall-1", content: answer };
      messages.push({ role: "user", content: [result] } as AnyMessage);
      reply = demoModel(messages, false);
      messages.push(reply.message);
    }
    usage = reply.usage;
  }
  console.log(`compacted before turns ${JSON.stringify(compactedAt)}`);
  console.log(`recalled ${JSON.stringify(recalled)}`);
  if (compactedAt.length < 2 || recalled.length === 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
