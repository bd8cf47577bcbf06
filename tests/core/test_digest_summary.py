"""The digest path's summary (`app.core.digest_summary`): the model's sections in the
template's order, with the requests, files, calls and errors the service writes."""

from __future__ import annotations

from app.core.digest_summary import REQUEST_WORDS, digest_summary
from app.core.facts import extract_facts
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.core.test_digest import session

ANSWER = (
    "## Goals & Decisions\n- Make the login test pass without renaming the token.\n\n"
    "## File Operations\n- The session module was created.\n\n"
    "## Task Status\n- Both token names work; the whole suite runs next."
)


def test_the_model_sections_come_with_the_services_lines_in_the_templates_order() -> None:
    messages = parse(session())
    assert digest_summary(ANSWER, messages, extract_facts(messages)) == (
        "## Goals & Decisions\n"
        '- First request: "Fix the failing login test in tests/test_login.py please."\n'
        '- Latest request: "Also keep the old token name working."\n'
        "- Make the login test pass without renaming the token.\n\n"
        "## File Operations\n"
        "- Read: `src/auth/login.py`\n"
        "- Created: `src/auth/session.py`\n"
        "- The session module was created.\n\n"
        "## Tool Calls\n- Calls: read_file 1, bash 1, write_file 1.\n"
        "- `pytest tests/test_login.py -x`\n\n"
        "## Task Status\n- Both token names work; the whole suite runs next.\n\n"
        "## Errors & Resolutions\n"
        "- bash `pytest tests/test_login.py -x`: E   KeyError: 'session_token' (open)"
    )


def test_headings_written_otherwise_and_text_before_them_are_kept() -> None:
    messages = parse(session())
    answer = (
        "Summary of the session:\n"
        "**Task Status:** tests run next.\n"
        "1. Goals and Decisions\n- keep both token names\n"
        "### File Operations\n- none changed by hand"
    )
    summary = digest_summary(answer, messages, extract_facts(messages))
    assert summary.startswith("Summary of the session:\n\n## Goals & Decisions\n")
    assert "- keep both token names\n\n## File Operations\n" in summary
    assert "## Task Status\ntests run next." in summary
    assert summary.count("## ") == 5


def test_a_long_request_is_quoted_up_to_its_first_words_on_one_line() -> None:
    words = [f"word{k}" for k in range(REQUEST_WORDS + 10)]
    messages = parse([user("\n".join(words)), assistant("Done.")])
    summary = digest_summary(ANSWER, messages, extract_facts(messages))
    quoted = " ".join(words[:REQUEST_WORDS])
    assert f'- First request: "{quoted} …"\n' in summary
    assert "Latest request" not in summary  # the only request is the first


def test_a_history_without_files_or_requests_gets_only_the_models_lines() -> None:
    messages = parse([assistant(tool_use("bash", "b1", command="ls")), tool_result("b1", "a")])
    summary = digest_summary(ANSWER, messages, extract_facts(messages))
    assert "## Goals & Decisions\n- Make the login test pass" in summary
    assert "## File Operations\n- The session module was created." in summary
