// Smoke test against a live service (COMPACT_URL): /count, /should-compact and /compact
// through the generated client, checking the answers. Exits non-zero on any failure.
// Run by scripts/ts_client_smoke.py, which starts the app on 127.0.0.1 and stops it.
import assert from "node:assert/strict";
import { type AnyMessage, ContextCompactError, createClient, unwrap } from "./src/index.js";

const client = createClient(process.env.COMPACT_URL, { token: process.env.COMPACT_API_TOKEN });
// A long tool result, so that a summary is smaller than what it replaces.
const TEST_FILE = Array.from({ length: 200 }, (_, i) => `def test_case_${i}(): assert app(${i})`).join("\n");

const messages: AnyMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Fix the failing test in tests/test_app.py." },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Let me read the test first." },
      { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "tests/test_app.py" } },
    ],
  },
  {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_01", content: TEST_FILE }],
  },
  { role: "assistant", content: "The test passes now." },
];

async function main(): Promise<void> {
  const counted = unwrap(await client.POST("/count", { body: { messages } }));
  assert.equal(counted.message_count, 5);
  assert.equal(counted.format, "anthropic");
  assert.ok(counted.token_count > 0);

  const decision = unwrap(
    await client.POST("/should-compact", {
      body: { messages, context_window: 100_000, threshold: 0.01, min_messages: 2 },
    }),
  );
  assert.equal(decision.should_compact, true);
  assert.equal(decision.reason, "above_threshold");

  const result = unwrap(
    await client.POST("/compact", { body: { messages, force: true, session_id: "ts-smoke" } }),
  );
  assert.equal(result.compacted, true);
  assert.equal(result.format, "anthropic");
  assert.ok(result.messages.length < messages.length + 3);

  // A compaction that would not shrink the list is refused, the messages as sent.
  const tiny = messages.slice(0, 2);
  const refused = unwrap(await client.POST("/compact", { body: { messages: tiny, force: true } }));
  assert.equal(refused.compacted, false);
  assert.equal(refused.reason, "no_gain");
  assert.deepEqual(refused.messages, tiny);

  const empty = unwrap(await client.POST("/count", { body: { messages: [], format: "openai" } }));
  assert.equal(empty.token_count, 0);

  try {
    unwrap(await client.POST("/count", { body: { messages: [{ role: "user" }] as AnyMessage[] } }));
    assert.fail("an invalid message was accepted");
  } catch (error: unknown) {
    assert.ok(error instanceof ContextCompactError);
    assert.equal(error.status, 422);
  }
  console.log(
    `ok: ${counted.token_count} tokens; ${decision.reason}; ` +
      `${messages.length} -> ${result.messages.length} messages`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
