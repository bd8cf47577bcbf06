"""The digest path's notes and prompt (`app.core.digest`): what they say, and their budget."""

from __future__ import annotations

from typing import Any

from app.core.digest import (
    DIGEST_NOTES_END,
    DIGEST_SHARE,
    DIGEST_SYSTEM,
    LEVELS,
    MIN_DIGEST_TOKENS,
    MODEL_SECTIONS,
    SERVICE_SECTIONS,
    build_digest,
    build_digest_prompt,
    digest_budget,
    render_digest,
    service_sections,
)
from app.core.errors import SummarizerError
from app.core.facts import extract_facts
from app.core.ports import SummaryRequest
from app.core.prompt import DIMENSIONS
from app.core.summary_check import SummarySource, accept_summary, source_of
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.fakes.tokenizer import WordTokenizer

WORDS = WordTokenizer()


def session() -> list[dict[str, Any]]:
    return [
        user("Fix the failing login test in tests/test_login.py please."),
        assistant("Reading it.", tool_use("read_file", "r1", path="src/auth/login.py")),
        tool_result("r1", "def login(user): ..."),
        assistant(tool_use("bash", "b1", command="pytest tests/test_login.py -x")),
        tool_result("b1", "E   KeyError: 'session_token'\n1 failed", is_error=True),
        assistant(tool_use("write_file", "w1", path="src/auth/session.py", content="x = 1")),
        tool_result("w1", "written"),
        user("Also keep the old token name working."),
        assistant("Done: both names are accepted; next I run the whole suite."),
    ]


def test_the_notes_state_requests_files_commands_calls_errors_and_latest_exchanges() -> None:
    messages = parse(session())
    notes = render_digest(messages, extract_facts(messages), LEVELS[0])
    assert notes.split("\n\n") == [
        'User requests, in order:\n- "Fix the failing login test in tests/test_login.py please."'
        '\n- "Also keep the old token name working."',
        "Files:\n- read: src/auth/login.py\n- created: src/auth/session.py",
        "Commands run, oldest first:\n- `pytest tests/test_login.py -x`",
        "Tool calls, oldest first:\n- read_file src/auth/login.py\n"
        "- bash pytest tests/test_login.py -x (failed)\n- write_file src/auth/session.py",
        "Errors:\n- bash `pytest tests/test_login.py -x`: E   KeyError: 'session_token' (open)",
        "Latest exchanges, oldest first:\nuser: Fix the failing login test in "
        "tests/test_login.py please.\nassistant: Reading it.\nuser: Also keep the old token "
        "name working.\nassistant: Done: both names are accepted; next I run the whole suite.",
    ]


def long_session(rounds: int) -> list[dict[str, Any]]:
    raw: list[dict[str, Any]] = []
    for k in range(rounds):
        raw += [
            user(f"Step {k}: " + "please change the parser " * 30),
            assistant(
                f"Working on step {k}. " + "thinking aloud " * 40,
                tool_use("bash", f"c{k}", command=f"make test-{k}"),
            ),
            tool_result(f"c{k}", "ok " * 400),
        ]
    return raw


def test_the_digest_fits_its_budget_by_showing_less_at_each_level() -> None:
    messages = parse(long_session(40))
    history = sum(WORDS.count(str(m.content)) for m in messages)
    budget = digest_budget(history, input_budget=100_000, overhead=100)
    assert budget == int(DIGEST_SHARE * history)
    notes = build_digest(messages, extract_facts(messages), 600, WORDS.count)
    assert WORDS.count(notes) <= 600
    # the first and the latest request stay, the gap is said
    assert notes.startswith('User requests, in order (34 more in between):\n- "Step 0:')
    assert "make test-39" in notes


def test_the_budget_is_a_share_of_the_history_at_least_a_floor_within_the_input_budget() -> None:
    assert digest_budget(10_000, input_budget=100_000, overhead=200) == 3000
    assert digest_budget(100, input_budget=100_000, overhead=200) == MIN_DIGEST_TOKENS
    assert digest_budget(100_000, input_budget=8000, overhead=300) == 7700
    assert digest_budget(100_000, input_budget=200, overhead=300) == 0


def test_a_budget_no_level_fits_cuts_the_tightest_notes() -> None:
    messages = parse(long_session(5))
    notes = build_digest(messages, extract_facts(messages), 20, WORDS.count)
    assert 0 < WORDS.count(notes) <= 20
    assert notes.startswith("User requests, in order")


def test_the_prompt_asks_for_the_five_headings_after_the_notes_with_the_limit_and_focus() -> None:
    prompt = build_digest_prompt("NOTES", 100, "  the parser  ")
    assert prompt.startswith("<notes>\nNOTES\n</notes>\n\n")
    asked = "## Goals & Decisions\n## File Operations\n## Task Status\n"
    assert asked in prompt
    assert "## Tool Calls" not in prompt  # the service writes it
    assert "under 100 words" in prompt
    assert "under 150 words" in build_digest_prompt("NOTES", 1200, None)  # DIGEST_MAX_WORDS
    assert prompt.endswith("The user asks this summary to focus on: the parser")
    assert not build_digest_prompt("NOTES", 300, None).endswith("parser")


def test_the_service_writes_the_tool_calls_and_errors_sections() -> None:
    messages = parse(session())
    assert service_sections(messages, extract_facts(messages)) == {
        "Tool Calls": "## Tool Calls\n- Calls: read_file 1, bash 1, write_file 1.\n"
        "- `pytest tests/test_login.py -x`",
        "Errors & Resolutions": "## Errors & Resolutions\n"
        "- bash `pytest tests/test_login.py -x`: E   KeyError: 'session_token' (open)",
    }
    # with the model's three sections, the summary has the five of the prompt's template
    titles = {title for title, _ in DIMENSIONS}
    assert set(MODEL_SECTIONS) | set(SERVICE_SECTIONS) == titles


def test_commands_and_calls_lose_their_leading_cd() -> None:
    raw = [
        user("Run the tests."),
        assistant(tool_use("bash", "b1", command="cd '/home/me/my repo' && pytest -x")),
        tool_result("b1", "ERROR: 2 failed", is_error=True),
        assistant("Two tests fail."),
    ]
    messages = parse(raw)
    notes = render_digest(messages, extract_facts(messages), LEVELS[0])
    assert "- `pytest -x`" in notes
    assert "- bash pytest -x (failed)" in notes
    assert "/home/me" not in notes


def _digest_source(messages: list[dict[str, Any]]) -> tuple[SummaryRequest, SummarySource]:
    rest = parse(messages)
    facts = extract_facts(rest)
    notes = build_digest(rest, facts, 400, WORDS.count)
    request = SummaryRequest(
        messages=tuple(rest),
        system=DIGEST_SYSTEM,
        prompt=build_digest_prompt(notes, 150, None),
        max_words=150,
        template="digest",
        facts=facts,
    )
    return request, source_of(request)


DIGEST_ANSWER = (
    "## Goals & Decisions\n- The user wants the failing login test in tests/test_login.py "
    "fixed and the old token name kept working.\n\n"
    "## File Operations\n- Read src/auth/login.py; wrote src/auth/session.py.\n\n"
    "## Task Status\n- Both token names are accepted; next the whole suite runs."
)


def test_a_digest_answer_is_judged_as_the_three_sections_it_was_asked_for() -> None:
    """The model writes three of the five sections; the check asks for those three, and the
    notes are what it must not copy back."""
    request, source = _digest_source(session())
    judged = accept_summary(
        DIGEST_ANSWER, template="digest", cap_tokens=1000, count=WORDS.count, source=source
    )
    assert judged == DIGEST_ANSWER
    without_status = DIGEST_ANSWER.split("\n\n## Task Status")[0]
    missing = accept_summary(
        without_status, template="digest", cap_tokens=1000, count=WORDS.count, source=source
    )
    assert isinstance(missing, SummarizerError)
    assert missing.reason == "missing_sections"
    notes = request.prompt.split(DIGEST_NOTES_END)[0].removeprefix("<notes>\n")
    copied = "## Goals & Decisions\n" + notes + "\n## File Operations\n" + notes
    copied += "\n## Task Status\n" + notes
    copy = accept_summary(
        copied, template="digest", cap_tokens=10_000, count=WORDS.count, source=source
    )
    assert isinstance(copy, SummarizerError)
    assert copy.reason in {"copy", "repetitive"}
