"""Sessions of other agent kinds for the claim rules of the summary gate, each with a later
request from the user: a Cline-like C# session (Anthropic shape), a Codex-like Node session
and a product-documents session of long prose in English and German (OpenAI shape, tool
calls as `tool_calls`), and an Aider-like session reading two long prose documents
(`tests/data/prose/`, copies of this repository's docs). `tests/gate_claims.py` writes
good answers of them and, one sentence changed each, the wrong answers of issue 44's
kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.builders import assistant, system, tool_result, tool_use, user
from tests.gate_sessions import Sheet

EMPTY_SHEET = Sheet("", "", (), (), "", "", (), ())


def oa_call(text: str, call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """An OpenAI-shape assistant turn with one tool call."""
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def oa_result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def oa_text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


ACTION_SYSTEM = (
    "using System;\n\npublic class ActionSystem\n{\n"
    + "".join(f"    // card rule {i}: see the design notes\n" for i in range(30))
    + "    public void ValidateCost(Card card)\n    {\n"
    '        if (card.Cost <= 0) throw new InvalidOperationException("Card cost must be '
    'positive");\n    }\n\n    public void Play(Card card)\n    {\n        ValidateCost(card);\n'
    "        card.Owner.Mana -= card.Cost;\n    }\n}\n"
)
CARD_DATA = json.dumps(
    [
        {"name": "Spark", "cost": 0, "effect": "deal 1 damage"},
        {"name": "Fireball", "cost": 4, "effect": "deal 6 damage"},
        {"name": "Shield", "cost": 2, "effect": "block 5"},
    ],
    indent=2,
)
DOTNET_FAIL = (
    "  Failed ZeroCostCardPlays [12 ms]\n  Error Message:\n"
    "   System.InvalidOperationException : Card cost must be positive\n  Stack Trace:\n"
    "     at ActionSystem.ValidateCost(Card card) in /proj/Assets/Scripts/ActionSystem.cs:line 42\n"
    "     at ActionSystem.Play(Card card) in /proj/Assets/Scripts/ActionSystem.cs:line 47\n\n"
    "Failed!  - Failed:     1, Passed:    14, Skipped:     0, Total:    15"
)
TEST_CMD = "dotnet test Cards.Tests/Cards.Tests.csproj"
CARDS_RAW: list[dict[str, Any]] = [
    system("You are Cline, a software engineer working in /proj."),
    user(
        "The card game crashes when a card has no cost. Fix ActionSystem.cs so zero-cost "
        "cards can be played, and keep the validation of negative costs."
    ),
    assistant(
        "Reading the action system.",
        tool_use("read_file", "c1", path="Assets/Scripts/ActionSystem.cs"),
    ),
    tool_result("c1", ACTION_SYSTEM),
    assistant(
        "Reading the card data.", tool_use("read_file", "c2", path="Assets/Data/CardDataJSON.txt")
    ),
    tool_result("c2", CARD_DATA),
    assistant("Running the tests.", tool_use("execute_command", "c3", command=TEST_CMD)),
    tool_result("c3", DOTNET_FAIL, is_error=True),
    assistant(
        "A cost of 0 must be allowed; only negative costs are invalid. I could also log a "
        "warning for free cards in CardLogger.cs, but the fix belongs in ValidateCost.",
        tool_use(
            "replace_in_file",
            "c4",
            path="Assets/Scripts/ActionSystem.cs",
            diff="<<<<<<< SEARCH\n        if (card.Cost <= 0)\n=======\n"
            "        if (card.Cost < 0)\n>>>>>>> REPLACE",
        ),
    ),
    tool_result("c4", "The content was successfully saved to Assets/Scripts/ActionSystem.cs."),
    assistant("Running the tests again.", tool_use("execute_command", "c5", command=TEST_CMD)),
    tool_result("c5", "Passed!  - Failed:     0, Passed:    15, Skipped:     0, Total:    15"),
    assistant("All 15 tests pass: zero-cost cards play and negative costs still throw."),
    user("Great. Now add a unit test for a card with cost -1 that expects the exception."),
    assistant(
        "Adding the test.",
        tool_use(
            "write_to_file",
            "c6",
            path="Cards.Tests/ActionSystemTests.cs",
            content="public class ActionSystemTests\n{\n    [Test]\n    public void "
            "NegativeCostThrows()\n    {\n        var card = new Card { Cost = -1 };\n"
            "        Assert.Throws<InvalidOperationException>(() => new ActionSystem()"
            ".ValidateCost(card));\n    }\n}\n",
        ),
    ),
    tool_result("c6", "The content was successfully saved to Cards.Tests/ActionSystemTests.cs."),
    assistant("Running the tests.", tool_use("execute_command", "c7", command="dotnett test")),
    tool_result("c7", "bash: dotnett: command not found\nexit code 127", is_error=True),
    assistant("A typo in the command.", tool_use("execute_command", "c8", command=TEST_CMD)),
    tool_result("c8", "Passed!  - Failed:     0, Passed:    16, Skipped:     0, Total:    16"),
    assistant("NegativeCostThrows passes with the other 15 tests (16 in total)."),
]

CHECKOUT = (
    "const express = require('express');\nconst app = express();\n"
    + "".join(f"// route {i}\n" for i in range(20))
    + "function total(cart) {\n  const first = cart.items[0].price;\n"
    "  return cart.items.reduce((sum, item) => sum + item.price, 0) || first;\n}\n"
    "app.post('/checkout', (req, res) => res.json({ total: total(req.body.cart) }));\n"
    "app.listen(3000);\n"
)
NPM_FAIL = (
    "FAIL test/checkout.test.js\n  ● checkout › empty cart returns 200\n\n"
    "    TypeError: Cannot read properties of undefined (reading 'price')\n"
    "      at total (src/checkout.js:27:31)\n\n"
    "Tests:       3 failed, 9 passed, 12 total"
)
NPM_NEW_FAIL = (
    "FAIL test/checkout.test.js\n  ● checkout › empty cart total is 0\n\n"
    '    Expected: {"total": 0}\n    Received: {}\n\nTests:       1 failed, 12 passed, 13 total'
)
SHOP_RAW: list[dict[str, Any]] = [
    system("You are Codex, a coding agent. Use the shell tool."),
    user(
        "The checkout server on port 3000 returns 500 when the cart is empty. Fix it in "
        "src/checkout.js, and run the tests."
    ),
    oa_call("Reading the handler.", "s1", "shell", command="cat src/checkout.js"),
    oa_result("s1", CHECKOUT),
    oa_call("Running the tests.", "s2", "shell", command="npm test"),
    oa_result("s2", NPM_FAIL),
    oa_call(
        "I could add a guard in src/cart.js instead, but the bug is line 27 of checkout.js.",
        "s3",
        "apply_patch",
        input="*** Update File: src/checkout.js\n-  const first = cart.items[0].price;\n"
        "+  if (!cart.items.length) return emptyCart();\n+  const first = cart.items[0].price;",
    ),
    oa_result("s3", "Done: updated src/checkout.js"),
    oa_call("Running the tests again.", "s4", "shell", command="npm test"),
    oa_result("s4", "PASS test/checkout.test.js\nTests:       12 passed, 12 total"),
    oa_call(
        "Checking the server.",
        "s5",
        "shell",
        command="curl -s -o /dev/null -w '%{http_code}' localhost:3000/checkout",
    ),
    oa_result("s5", "200"),
    oa_text("Empty carts now get 200; all 12 tests pass."),
    user('Good. Now make the empty-cart response say {"total": 0} and add a test for it.'),
    oa_call(
        "Adding the test first.",
        "s6",
        "apply_patch",
        input="*** Update File: test/checkout.test.js\n+test('empty cart total is 0', async () "
        "=> {\n+  expect(await post({ items: [] })).toEqual({ total: 0 });\n+});",
    ),
    oa_result("s6", "Done: updated test/checkout.test.js"),
    oa_call("Running it.", "s7", "shell", command="npm test"),
    oa_result("s7", NPM_NEW_FAIL),
    oa_text(
        "The handler returns {} for an empty cart, so the new test fails. Next I will make "
        "emptyCart() in src/checkout.js return { total: 0 }."
    ),
]

PRD = (
    "# Onboarding 2.0 — product requirements\n\n"
    "## Why\nNew teams sign up, look around once and leave. Only 34% of new workspaces invite "
    "a second member within a week, and the ones that do not rarely come back. Sales hears "
    "the same story in every call: the first session does not show what the product is for, "
    "and the empty project list gives nobody a reason to stay. Onboarding 2.0 replaces the "
    "empty start with a guided first project that the team builds together.\n\n"
    "## Who\nThe first user is usually a team lead who was sent a link by a colleague. They "
    "have ten minutes, they have not read the documentation, and they decide in that first "
    "session whether to bring their team. The second user is the invited member, who needs "
    "to see at once what the lead prepared for them and what they are expected to do.\n\n"
    "## What\nA checklist of five steps on the first screen; a sample project that can be "
    "deleted in one click; invitations sent from the checklist rather than from settings; "
    "a weekly email to leads whose teams stall. We will not build a product tour: the "
    "research showed people close tours without reading them.\n\n"
    "## Success\nActivation (a second member active within seven days) from 34% to 45% by "
    "the end of the quarter. The beta opens on 3 March for ten percent of new workspaces; "
    "general availability follows when activation holds for four weeks.\n\n"
    "## Risks\nThe sample project may be mistaken for real data; the weekly email may read "
    "as spam if it is sent to leads who already invited their team. Legal must review the "
    "email before the beta."
)
PRICING = (
    "# Pricing 2025\n\nThree plans, billed per seat. Starter costs 12 euros a seat per month "
    "and covers up to ten seats, with the guided onboarding and email support. Team costs "
    "29 euros a seat per month, adds single sign-on, audit logs and priority support, and "
    "has no seat limit. Enterprise is priced by contract and adds a dedicated success "
    "manager, custom data retention and an uptime commitment of 99.9 percent.\n\n"
    "Annual billing saves 15 percent on Starter and Team. Existing customers keep their "
    "current price for twelve months after the change and are told by email sixty days in "
    "advance. Discounts above 20 percent need the approval of the head of sales; nonprofits "
    "and schools get Team at the Starter price on request."
)
BRIEF = (
    "# Launch brief: Onboarding 2.0\n\nNew workspaces get a guided first project and a "
    "five-step checklist. Goal: activation from 34% to 45% this quarter. Beta on 3 March for "
    "10% of new workspaces.\n\nPricing: Starter 12 EUR, Team 29 EUR per seat and month; "
    "annual billing saves 15%.\n"
)
LINT_FAIL = (
    "docs/launch-brief.md:14 MD013/line-length Line length [Expected: 80; Actual: 112]\n"
    "exit status 1"
)
BRIEF_DE = (
    "# Startbrief: Onboarding 2.0\n\nNeue Workspaces erhalten ein geführtes erstes Projekt "
    "und eine Checkliste mit fünf Schritten. Ziel: Aktivierung von 34 % auf 45 % in diesem "
    "Quartal. Beta ab dem 3. März für 10 % der neuen Workspaces.\n"
)
LAUNCH_RAW: list[dict[str, Any]] = [
    system("You are a writing assistant with a shell."),
    user(
        "Read docs/PRD-onboarding.md and docs/pricing-2025.md and write docs/launch-brief.md: "
        "a one-page brief for the sales team, in plain English."
    ),
    oa_call("Reading the requirements.", "d1", "shell", command="cat docs/PRD-onboarding.md"),
    oa_result("d1", PRD),
    oa_call("Reading the pricing.", "d2", "shell", command="cat docs/pricing-2025.md"),
    oa_result("d2", PRICING),
    oa_call(
        "Drafting the brief.",
        "d3",
        "write_file",
        path="docs/launch-brief.md",
        content=BRIEF,
    ),
    oa_result("d3", "Wrote docs/launch-brief.md"),
    oa_call("Linting.", "d4", "shell", command="npx markdownlint docs/launch-brief.md"),
    oa_result("d4", LINT_FAIL),
    oa_call(
        "Rewrapping the long line.",
        "d5",
        "write_file",
        path="docs/launch-brief.md",
        content=BRIEF.replace("; annual", ";\nannual"),
    ),
    oa_result("d5", "Wrote docs/launch-brief.md"),
    oa_call("Linting again.", "d6", "shell", command="npx markdownlint docs/launch-brief.md"),
    oa_result("d6", ""),
    oa_text("The brief is written and lints clean."),
    user(
        "Thanks. Please also add a short German version for the Berlin team, "
        "docs/launch-brief.de.md."
    ),
    oa_call(
        "Writing the German version.",
        "d7",
        "write_file",
        path="docs/launch-brief.de.md",
        content=BRIEF_DE,
    ),
    oa_result("d7", "Wrote docs/launch-brief.de.md"),
    oa_call(
        "Linting both.",
        "d8",
        "shell",
        command="npx markdownlint docs/launch-brief.md docs/launch-brief.de.md",
    ),
    oa_result("d8", ""),
    oa_text("Both briefs lint clean; the German one is docs/launch-brief.de.md."),
]

PROSE_DOCS = Path(__file__).resolve().parent / "data" / "prose"
HANDBOOK_RAW: list[dict[str, Any]] = [
    system("You are Aider, a pair programmer. Answer from the files you read."),
    user(
        "Read docs/what-counts-as-a-summary.md and docs/recall.md and explain how the service "
        "decides that an answer is a summary."
    ),
    assistant(
        "Reading the first document.",
        tool_use("view", "h1", path="docs/what-counts-as-a-summary.md"),
    ),
    tool_result("h1", (PROSE_DOCS / "what-counts-as-a-summary.md").read_text(encoding="utf-8")),
    assistant("Reading the second.", tool_use("view", "h2", path="docs/recall.md")),
    tool_result("h2", (PROSE_DOCS / "recall.md").read_text(encoding="utf-8")),
    assistant(
        "Every answer is judged on its content against the prompt and the transcript; "
        "refusals, echoes, copies and filler are refused, and what is left must talk about "
        "this conversation."
    ),
    user("And in two sentences: how does recall find an archived message again?"),
    assistant(
        "An archive keeps the messages a compaction replaced, and the recall tool searches "
        "them by words or by id. The summary names the archive so the agent can ask for it."
    ),
]
