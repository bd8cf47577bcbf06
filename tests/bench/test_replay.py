"""The long-session replay on small conversations built here: its fact rules, its agent
loop (against a scripted service and against the real app in-process) and its report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.provider.dialects import to_openai
from bench.replay import in_process, load_conversations, main, run_all
from bench.replay_driver import (
    CONTINUE,
    Conversation,
    RunResult,
    _Loop,
    ledger_section,
    replay,
    run_from_json,
)
from bench.replay_facts import KINDS, context_text, error_line, extract, kept, request_line
from bench.replay_report import render, totals

pytestmark = pytest.mark.anyio
Msg = dict[str, Any]


def call(id_: str, name: str, **input_: Any) -> Msg:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def result(id_: str, text: str, is_error: bool = False) -> Msg:
    block: Msg = {"type": "tool_result", "tool_use_id": id_, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def session() -> list[Msg]:
    """A small agent session in the Anthropic shape, with every kind of fact."""
    return [
        {
            "role": "user",
            "content": "Fix the failing parser test.\nIt is in tests/.\n"
            "<environment_details>\n# VSCode Open Tabs\nsecret.py\n</environment_details>",
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                call("t1", "read_file", path="src/parser.py"),
            ],
        },
        {"role": "user", "content": [result("t1", "def parse(): ...")]},
        {
            "role": "assistant",
            "content": [call("t2", "run_terminal_cmd", command="python  -m pytest\n  -q")],
        },
        {
            "role": "user",
            "content": [
                result(
                    "t2",
                    'Traceback (most recent call last):\n  File "x.py", line 1\n'
                    "ValueError: bad token\nDuring handling, more output\nexit 1",
                )
            ],
        },
        {
            "role": "assistant",
            "content": [
                call("t3", "edit_file", target_file="src/parser.py", code_edit="..."),
                call("t4", "list_dir", relative_workspace_path="src"),
            ],
        },
        {
            "role": "user",
            "content": [result("t3", "Cancelled", is_error=True), result("t4", "a b")],
        },
        {
            "role": "assistant",
            "content": [call("t5", "run_terminal_cmd", command="python -m pytest -q")],
        },
        {
            "role": "user",
            "content": [
                result("t5", "1 passed"),
                {"type": "text", "text": "Now also handle tabs."},
            ],
        },
        {"role": "assistant", "content": "Done."},
    ]


# --- fact rules --------------------------------------------------------------------------


def test_facts_of_a_session_by_kind() -> None:
    facts = extract(session())
    assert facts.by_kind == {
        "path": ["src/parser.py"],
        "command": ["python -m pytest -q"],
        "error": ["Cancelled"],
        "output_error": ["ValueError: bad token"],
        "first_request": ["Fix the failing parser test."],
        "request": ["Now also handle tabs."],
    }


def test_the_same_facts_in_the_openai_shape_where_no_error_is_flagged() -> None:
    openai = to_openai([Message.model_validate(m) for m in session()])
    assert not any("is_error" in m for m in openai)
    anthropic = extract(session()).by_kind
    assert extract(openai).by_kind == anthropic | {
        "error": [],
        "output_error": ["ValueError: bad token", "Cancelled"],
    }


@pytest.mark.parametrize(
    ("text", "flagged", "line"),
    [
        # the line naming the error, not the boilerplate after it
        (
            "Your proposed edit has introduced new syntax error(s).\n"
            "E999 IndentationError: unexpected indent\n"
            "DO NOT re-run the same failed edit command.",
            False,
            "E999 IndentationError: unexpected indent",
        ),
        ("ok\nerror: could not compile `x`\nmore", False, "error: could not compile `x`"),
        ("bash: foo: command not found", False, "bash: foo: command not found"),
        ("Process exited with exit code 2", False, "Process exited with exit code 2"),
        ("Tool call timed out after 5000ms", False, "Tool call timed out after 5000ms"),
        (
            "FAILED tests/test_a.py::test_b - assert 1 == 2",
            False,
            "FAILED tests/test_a.py::test_b - assert 1 == 2",
        ),
        ("Cancelled", False, "Cancelled"),
        ("\n  something   odd \nsecond", True, "something odd"),
        ("1 passed in 0.2s", False, None),
        ("Failed to initialize engine, retrying", False, None),
        ("def f():\n    raise ValueError('x')", False, None),
        # Gemini CLI's shell tool says there was no error
        ("Stdout: ok\nError: (none)\nExit Code: 0\nSignal: (none)", False, None),
        ("Stdout: ok\nError: (none)\nExit Code: 1", False, "Exit Code: 1"),
    ],
)
def test_error_key_lines(text: str, flagged: bool, line: str | None) -> None:
    assert error_line(text, flagged) == line


@pytest.mark.parametrize(
    ("text", "flagged", "tool", "line"),
    [
        # a flagged result that opens with its failure: the diff after it is what it carried
        (
            "User rejected update to a.py\n  3 +  sys.exit(2)  # Exit code 2 blocks it",
            True,
            "Edit",
            "User rejected update to a.py",
        ),
        (
            "Failed to edit, 0 occurrences found for old_string (## Plan\n"
            "- fix the permission denied on the cache dir)",
            True,
            "replace",
            "Failed to edit, 0 occurrences found for old_string (## Plan",
        ),
        # unflagged (the OpenAI shape): no error by its opening alone; one when another
        # line names one, and then named by its opening line all the same
        ("Failed to edit, 0 occurrences found", False, "replace", None),
        (
            "Failed to edit, 0 occurrences found for old_string (## Plan\n"
            "- fix the permission denied on the cache dir)",
            False,
            "replace",
            "Failed to edit, 0 occurrences found for old_string (## Plan",
        ),
        # a file read that quotes an error names none; one that says it failed does
        ("# Plan\nsteps\n- fix the permission denied on the cache dir", False, "read_file", None),
        ("Error: File not found: a.py", False, "read_file", "Error: File not found: a.py"),
        ("# Plan\n- fix the permission denied", False, "bash", "- fix the permission denied"),
        # Go's failed test names the failure; the exit status after it does not
        (
            "ok  pkg/a\n--- FAIL: TestX (0.00s)\n    x_test.go:9: got 3\nFAIL\nExit Code: 1",
            False,
            "run_shell_command",
            "--- FAIL: TestX (0.00s)",
        ),
    ],
)
def test_error_key_lines_by_tool(text: str, flagged: bool, tool: str, line: str | None) -> None:
    assert error_line(text, flagged, tool) == line


def test_a_long_error_line_is_cut_to_200_characters() -> None:
    line = error_line("Error: " + "x" * 300, False)
    assert line == ("Error: " + "x" * 300)[:200]


def test_harness_blocks_are_not_the_users_words() -> None:
    assert request_line("<system-reminder>be brief</system-reminder>\n\n  go   on ") == "go on"
    assert request_line("<environment_details>\nonly this\n</environment_details>") is None


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[Request interrupted by user for tool use]", None),
        ("[Request interrupted by user]", None),
        ("keep the old name\n[Request interrupted by user]\nnoise", "keep the old name"),
        ("[Request interrupted by user]\n\nNo, call the v2 endpoint.", "No, call the v2 endpoint."),
        ("[TASK RESUMPTION] This task was interrupted 3 minutes ago.\nGo on.", None),
        (
            "<task>\nRename the key `timeout`.\n</task>\n<environment_details>x",
            "Rename the key `timeout`.",
        ),
        ("This is the Gemini CLI. We are setting up the context for our chat.\nToday", None),
        ("  # TODO LIST UPDATE REQUIRED\n- [ ] step", None),
        (
            "Use [Request interrupted] as the marker text",
            "Use [Request interrupted] as the marker text",
        ),
    ],
)
def test_harness_notices_are_not_the_users_words(text: str, line: str | None) -> None:
    """A notice the harness writes into a user message is not a request (the service's
    ledger leaves it out on purpose): from its line to the block's end it goes, or only
    its line for a notice of one line."""
    assert request_line(text) == line


def test_a_fact_is_kept_when_found_with_whitespace_collapsed() -> None:
    facts = extract(session())
    final = [
        {
            "role": "user",
            "content": "Summary: ran `python -m\n pytest -q`, hit ValueError: bad token",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "src/parser.py"}'},
                }
            ],
        },
    ]
    assert "src/parser.py" in context_text(final)
    assert kept(facts, final) == {
        "path": (1, 1),
        "command": (1, 1),
        "error": (0, 1),
        "output_error": (1, 1),
        "first_request": (0, 1),
        "request": (0, 1),
    }


# --- the agent loop against a scripted service ------------------------------------------


class ScriptedService:
    """Counts 100 tokens a message; says compact at `at` messages or more; compacts to a
    summary pair, or refuses when `refuse` says so."""

    def __init__(self, refuse: bool = False, at: int = 6) -> None:
        self.refuse = refuse
        self.at = at
        self.calls: list[tuple[str, int]] = []

    async def archive(self, archive_id: str) -> dict[str, Any]:
        return {}

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.endswith("/recall"):
            self.calls.append((path, 0))
            return 200, {"session_id": "s", "query": body["query"], "hits": []}
        messages = body["messages"]
        self.calls.append((path, len(messages)))
        tokens = 100 * len(messages)
        if path == "/should-compact":
            return 200, {"token_count": tokens, "should_compact": len(messages) >= self.at}
        if path == "/count":
            return 200, {"token_count": tokens}
        assert body["options"]["strategy"] == "tail"
        assert body["options"]["context_window"] == 550
        assert body["session_id"] == "replay.s.anthropic.tail.550"
        if self.refuse:
            return 200, {"compacted": False, "reason": "too_few_rounds", "messages": messages}
        summary = [
            {"role": "user", "content": "[Conversation compressed] src/parser.py"},
            {"role": "assistant", "content": "Understood."},
        ]
        ledger = [{"kind": "file_read", "text": "src/parser.py", "in_summary": True}]
        return 200, {
            "compacted": True,
            "strategy": "tail",
            "messages": summary,
            "summary": "one two three",
            "ledger": ledger,
        }


def words(text: str) -> int:
    return len(text.split())


async def test_the_loop_compacts_continues_and_tracks_the_largest_context() -> None:
    service = ScriptedService()
    run = await replay(service, Conversation("s", "anthropic", session()), "tail", 550, words)  # type: ignore[arg-type]
    # asked before each of the 5 assistant turns, with 1, 3, 5, 7, 5 messages in context
    asks = [n for path, n in service.calls if path == "/should-compact"]
    assert asks == [1, 3, 5, 7, 5]
    assert (run.llm_calls, run.compactions, run.continuations) == (5, 1, 1)
    # sent: 100, 300, 500, then 700 compacted to 300 (summary pair + Continue.), 500
    assert run.max_sent_tokens == 500
    assert run.over_window == 0
    assert run.invalid == 0
    assert run.final_valid
    assert run.answered_by == {"tail": 1}
    assert run.refills == 0
    assert run.ledger_tokens_max == words("## Ledger\n- [file_read] src/parser.py")
    assert run.summary_tokens_max == 3
    # the continuation sits between the compacted list's assistant turn and the next one
    roles = [m["role"] for m in run.final_context]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert run.final_context[2] == CONTINUE
    assert run.facts["path"] == [1, 1]
    assert run.facts["request"] == [1, 1]  # "Now also handle tabs." came after
    assert run.facts["first_request"] == [0, 1]
    assert not run.first_request_kept
    assert (run.facts["error"], run.facts["output_error"]) == ([0, 1], [0, 1])
    # every missing fact was asked of recall (which the scripted service cannot answer)
    assert run.missing == sum(total - found for found, total in run.facts.values()) == 3
    assert run.recalled == 0
    assert len([p for p, _ in service.calls if p.endswith("/recall")]) == 3


async def test_refusals_are_counted_by_reason_and_overflow_is_flagged() -> None:
    run = await replay(
        ScriptedService(refuse=True),
        Conversation("s", "anthropic", session()),
        "tail",
        550,
        words,  # type: ignore[arg-type]
    )
    assert run.compactions == 0
    assert run.refusals == {"too_few_rounds": 2}  # at 7 and 9 messages
    assert run.max_sent_tokens == 900
    assert run.over_window == 2
    assert run.final_context == session()
    assert all(v[0] == v[1] for v in run.facts.values())
    assert run.first_request_kept


async def test_compactions_soon_after_the_last_one_are_counted_as_refills() -> None:
    service = ScriptedService(at=3)
    run = await replay(service, Conversation("s", "anthropic", session()), "tail", 550, words)  # type: ignore[arg-type]
    # compacted before the 2nd, 3rd, 4th and 5th model request: each refilled in one request
    assert (run.compactions, run.refills) == (4, 3)


# --- against the real app, in-process ----------------------------------------------------


def long_session(rounds: int) -> list[Msg]:
    messages: list[Msg] = [{"role": "user", "content": "Port the CLI to click."}]
    for i in range(rounds):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Step {i}."},
                    call(f"c{i}", "run_terminal_cmd", command=f"grep -rn item{i} src"),
                ],
            }
        )
        output = "\n".join(f"src/mod{i}.py:{n}: item{i} = {n} * {n}" for n in range(40))
        messages.append({"role": "user", "content": [result(f"c{i}", output)]})
    messages.append({"role": "assistant", "content": "Ported."})
    return messages


@pytest.mark.parametrize("shape", ["anthropic", "openai"])
async def test_replay_through_the_real_app_stays_valid_and_below_the_window(shape: str) -> None:
    messages = long_session(12)
    if shape == "openai":
        messages = to_openai([Message.model_validate(m) for m in messages])
    conversation = Conversation("built", shape, messages)  # type: ignore[arg-type]
    runs = await run_all([conversation], ["full", "prune"], [3000])
    full, prune = runs
    assert full.compactions >= 1
    assert full.continuations == full.compactions  # `full` ends with its assistant turn
    assert full.invalid == 0
    assert full.final_valid
    assert full.http_errors == 0
    assert 0 < full.max_sent_tokens < 3000
    assert full.over_window == 0
    assert full.final_context[-1]["content"] == "Ported."
    assert (full.facts["first_request"], full.facts["request"]) == ([1, 1], [0, 0])
    # what the final context lacks, recall finds in the session's archives
    assert full.recalled == full.missing
    assert prune.llm_calls == full.llm_calls == 13
    assert prune.invalid == 0
    assert prune.http_errors == 0


# --- the report --------------------------------------------------------------------------


def test_totals_add_up_per_strategy_and_window() -> None:
    def run(shape: str, strategy: str, compactions: int, sent: int, over: int) -> RunResult:
        r = RunResult("c", shape, strategy, 1000, llm_calls=10, compactions=compactions)
        r.max_sent_tokens, r.over_window = sent, over
        r.refusals.update({"no_gain": 1})
        r.answered_by.update({strategy: compactions})
        r.facts = {
            "path": [1, 2],
            "command": [2, 2],
            "error": [0, 1],
            "output_error": [1, 1],
            "first_request": [0, 1],
            "request": [1, 1],
        }
        r.missing, r.recalled = 3, 3
        r.ledger_tokens_max = 40
        return r

    runs = [run("openai", "full", 2, 900, 0), run("openai", "full", 3, 1200, 2)]
    runs[0].conversation = "d"
    (row,) = totals(runs)
    assert row["compactions"] == 5
    assert row["llm_calls"] == 20
    assert row["refusals"] == {"no_gain": 2}
    assert (row["max_sent_tokens"], row["over_window"], row["runs_over_window"]) == (1200, 2, 1)
    assert row["facts"]["path"] == {"kept": 2, "total": 4}
    assert row["ledger_share_max"] == 0.04
    assert row["first_request_kept"] == 0
    assert row["facts"]["all"] == {"kept": 10, "total": 16}
    assert (row["missing"], row["recalled"]) == (6, 6)
    table = render(runs, [row])
    assert "| 0/2 (0%) | 2/2 (100%) | 10/16 (62%) | 6/6 (100%) | 40 (4.0%) |" in table
    assert (
        "| full | 1k | openai | 20 | 5 / 0 | 2 no_gain | 5 full | 1,200 (120%) **OVER ×2** | 0 "
        "| 2/4 (50%) |" in table
    )
    other = run("anthropic", "full", 1, 100, 0)
    assert [r["shape"] for r in totals([*runs, other])] == ["openai", "anthropic"]


def test_main_json_on_a_built_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = long_session(6)
    openai = to_openai([Message.model_validate(m) for m in messages])
    for shape, data in (("anthropic", messages), ("openai", openai)):
        path = tmp_path / f"small.{shape}.json"
        path.write_text(json.dumps({"messages": data, "format": shape}))
    (tmp_path / "bigger.anthropic.json").write_text(json.dumps({"messages": long_session(9)}))
    assert [c.name for c in load_conversations(tmp_path, quick=True)] == ["small", "small"]
    code = main(
        [
            "--corpus",
            str(tmp_path),
            "--quick",
            "--json",
            "--strategies",
            "tail",
            "--windows",
            "2000",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"command", "date", "machine", "wall_seconds", "totals", "runs"}
    assert [(r["shape"], r["strategy"], r["window"]) for r in report["runs"]] == [
        ("anthropic", "tail", 2000),
        ("openai", "tail", 2000),
    ]
    assert [r["shape"] for r in report["totals"]] == ["anthropic", "openai"]
    row = report["totals"][0]
    assert set(row) >= {"missing", "recalled", "shape"}
    assert set(row["facts"]) == {
        "path",
        "command",
        "error",
        "output_error",
        "first_request",
        "request",
        "all",
    }
    assert row["runs"] == 1
    assert row["llm_calls"] == 7
    assert row["over_window"] == sum(r["over_window"] for r in report["runs"])


def test_the_ledger_is_measured_as_the_summary_shows_it() -> None:
    summary = "## Goals\n- x\n\n## Ledger\n- [file_read] a.py\n- b.py\n\n> Recall: call `recall`."
    assert ledger_section(summary) == "## Ledger\n- [file_read] a.py\n- b.py"
    assert ledger_section("## Goals\n- x") == ""
    alone = "## Ledger\n- [command] ls\n\n> Recall: call `recall`."
    assert ledger_section(alone) == "## Ledger\n- [command] ls"


async def test_recall_finds_an_archived_fact_and_nothing_for_one_never_said() -> None:
    tokenizer = TiktokenTokenizer()
    async with in_process(tokenizer) as service:
        conversation = Conversation("built", "anthropic", long_session(12))
        loop = _Loop(service, conversation, "full", 3000, tokenizer.count, False)
        run = await loop.run()
        assert run.compactions >= 1
        # the first command was summarized long ago: its archive holds the call
        assert await loop.recalled("grep -rn item0 src")
        assert not await loop.recalled("grep -rn item99 src")


def test_a_report_renders_again_from_its_json() -> None:
    run = RunResult("s", "openai", "tail", 32_000, "aider", "held-out", llm_calls=3, growth=1)
    run.facts = {kind: [1, 2] for kind in KINDS}
    again = run_from_json(json.loads(json.dumps(run.as_json())))
    assert again.as_json() == run.as_json()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "<session_context>\nThis is the Gemini CLI. We are setting up the context for our "
            "chat.\n</session_context>",
            None,
        ),
        ("User steering update:\n<user_input>\nstop\n</user_input>", "stop"),
        ("I ran this command:\n\npytest\n\nAnd got this output:\n\nok", None),
        ("# 2 SEARCH/REPLACE blocks failed to match!\n\n## SearchReplaceNoExactMatch", None),
        ("Please continue working on the task on whatever approach you think is suitable.", None),
        ("<RUNTIME_INFORMATION>\nhosts\n</RUNTIME_INFORMATION>\nFix the bug.", "Fix the bug."),
    ],
)
def test_each_harness_s_own_text_is_no_request(text: str, line: str | None) -> None:
    """As the harnesses' sources write them (issue 48)."""
    assert request_line(text) == line
