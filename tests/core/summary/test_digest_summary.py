"""The digest path's summary (`app.core.summary.digest_summary`): the model's answers in the
template's order, with the requests, files, calls and errors the service writes."""

from __future__ import annotations

from app.core.history.facts import extract_facts
from app.core.summary.digest_summary import REQUEST_WORDS, digest_summary
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.core.summary.test_digest import session

ANSWERS = {
    "Goals & Decisions": "Make the login test pass without renaming the token.",
    "Task Status": "- Both token names work.\n- The whole suite runs next.",
}


def test_the_models_answers_come_with_the_services_lines_in_the_templates_order() -> None:
    messages = parse(session())
    assert digest_summary(ANSWERS, messages, extract_facts(messages)) == (
        "## Goals & Decisions\n"
        '- First request: "Fix the failing login test in tests/test_login.py please."\n'
        '- Latest request: "Also keep the old token name working."\n'
        "- Make the login test pass without renaming the token.\n\n"
        "## File Operations\n"
        "- Read: `src/auth/login.py`\n"
        "- Created: `src/auth/session.py`\n\n"
        "## Tool Calls\n- Calls: read_file 1, bash 1, write_file 1.\n"
        "- `pytest tests/test_login.py -x`\n\n"
        "## Task Status\n- Both token names work.\n- The whole suite runs next.\n\n"
        "## Errors & Resolutions\n"
        "- bash `pytest tests/test_login.py -x`: E   KeyError: 'session_token' (open)"
    )


def test_a_long_request_is_quoted_up_to_its_first_words_on_one_line() -> None:
    words = [f"word{k}" for k in range(REQUEST_WORDS + 10)]
    messages = parse([user("\n".join(words)), assistant("Done.")])
    summary = digest_summary(ANSWERS, messages, extract_facts(messages))
    quoted = " ".join(words[:REQUEST_WORDS])
    assert f'- First request: "{quoted} …"\n' in summary
    assert "Latest request" not in summary  # the only request is the first


def test_a_history_without_files_or_requests_says_none_where_it_has_nothing() -> None:
    messages = parse([assistant(tool_use("bash", "b1", command="ls")), tool_result("b1", "a")])
    summary = digest_summary({"Task Status": "Listing."}, messages, extract_facts(messages))
    assert summary.startswith("## Goals & Decisions\n- None.\n\n## File Operations\n- None.\n")
    assert "## Task Status\n- Listing.\n\n" in summary
