"""The digest path's notes and prompt (`app.core.summary.digest`): what they say, and their
budget."""

from __future__ import annotations

from typing import Any

from app.core.errors import SummarizerError
from app.core.history.facts import extract_facts
from app.core.ports import SummaryRequest
from app.core.summary.check import SummarySource, accept_summary, source_of
from app.core.summary.digest import (
    DIGEST_NOTES_END,
    DIGEST_SHARE,
    DIGEST_SYSTEM,
    LEVELS,
    MIN_DIGEST_TOKENS,
    MODEL_SECTIONS,
    SECTION_QUESTIONS,
    SERVICE_SECTIONS,
    build_digest,
    build_section_prompt,
    digest_budget,
    render_digest,
    service_sections,
)
from app.core.summary.prompt import DIMENSIONS
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


def test_each_sections_prompt_is_the_same_notes_then_its_one_question_and_the_focus() -> None:
    goals = build_section_prompt("NOTES", "Goals & Decisions", "  the parser  ")
    status = build_section_prompt("NOTES", "Task Status", None)
    notes = "<notes>\nNOTES\n</notes>\n\n"
    assert goals.startswith(notes)  # the same notes first: the server reuses them
    assert status.startswith(notes)
    assert goals == (
        notes + "What does the user want, and what was decided? Answer from the notes above "
        "in 1 or 2 short sentences, in your own words. The user asks this summary to focus "
        "on: the parser"
    )
    assert status == (
        notes + "What was being done last, and what is the next step? Answer from the notes "
        "above in 1 or 2 short sentences, in your own words."
    )
    assert MODEL_SECTIONS == tuple(SECTION_QUESTIONS) == ("Goals & Decisions", "Task Status")


def test_the_service_writes_the_files_tool_calls_and_errors_sections() -> None:
    messages = parse(session())
    assert service_sections(messages, extract_facts(messages)) == {
        "File Operations": "## File Operations\n- Read: `src/auth/login.py`\n"
        "- Created: `src/auth/session.py`",
        "Tool Calls": "## Tool Calls\n- Calls: read_file 1, bash 1, write_file 1.\n"
        "- `pytest tests/test_login.py -x`",
        "Errors & Resolutions": "## Errors & Resolutions\n"
        "- bash `pytest tests/test_login.py -x`: E   KeyError: 'session_token' (open)",
    }
    # with the model's two sections, the summary has the five of the prompt's template
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
        prompt=build_section_prompt(notes, "Task Status", None),
        max_words=150,
        template="digest",
        facts=facts,
        section="Task Status",
    )
    return request, source_of(request)


STATUS = "## Task Status\n- Both token names are accepted; next the whole suite runs."


def _judge(text: str, source: SummarySource, cap: int = 1000) -> str | SummarizerError:
    return accept_summary(
        text,
        template="digest",
        cap_tokens=cap,
        count=WORDS.count,
        source=source,
        sections=("Task Status",),
    )


def test_a_sections_answer_is_judged_under_its_one_heading() -> None:
    """The model answers one section; the check asks for that heading only, and the notes
    are what the answer must not copy back."""
    request, source = _digest_source(session())
    assert _judge(STATUS, source) == STATUS
    # the whole template is still what a judgement without `sections` asks for
    whole = accept_summary(STATUS, template="digest", cap_tokens=1000, count=WORDS.count)
    assert isinstance(whole, SummarizerError)
    assert whole.reason == "missing_sections"
    notes = request.prompt.split(DIGEST_NOTES_END)[0].removeprefix("<notes>\n")
    copy = _judge("## Task Status\n" + notes, source, cap=10_000)
    assert isinstance(copy, SummarizerError)
    assert copy.reason in {"copy", "repetitive"}
    question = request.prompt.split(DIGEST_NOTES_END)[1].strip()
    echo = _judge(f"## Task Status\n{question} {question}", source)
    assert isinstance(echo, SummarizerError)
    assert echo.reason == "echo"
