from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.assemble import SUMMARY_PREFIX, summary_message
from app.core.history.own_words import request_fact
from app.core.ledger.extract import (
    _ABANDONED,
    _INSTRUCTION,
    Fact,
    _paths,
    _sentences,
    _sentences_matching,
    extract_ledger,
    fit_budget,
    guard_summary,
    merge,
    parse_ledger,
    previous_ledgers,
    render_ledger,
)
from app.core.provider.dialects import from_openai
from tests.builders import assistant, parse, tool_result, tool_use, user


def assert_sentences_as_before(text: str) -> None:
    """The sentences found are those the patterns before found in each sentence."""
    for pattern, reference in ((_INSTRUCTION, INSTRUCTION_BEFORE), (_ABANDONED, ABANDONED_BEFORE)):
        expected = [s for s in _sentences(text) if reference.search(s)]
        assert list(_sentences_matching(text, pattern)) == expected


# The patterns as they were before the raw-text scan (sentence by sentence, no lookahead):
# the ledger must find exactly what they found.
INSTRUCTION_BEFORE = re.compile(
    r"\b(always|never|don'?t|do not|must|mustn'?t|should not|shouldn'?t|instead of|"
    r"make sure|avoid|prefer)\b",
    re.IGNORECASE,
)
ABANDONED_BEFORE = re.compile(
    r"(didn'?t work|did not work|doesn'?t work|does not work|won'?t work|not working|"
    r"\binstead\b|gave up|another approach|different approach)",
    re.IGNORECASE,
)


def words(text: str) -> int:
    """A stand-in token counter: one token a word."""
    return len(text.split())


def test_each_fact_kind_is_extracted_in_order() -> None:
    bash = tool_use("bash", "t1", command="sed -i 's/a/b/' src/app.py && python -m pytest")
    failing = tool_use("bash", "t2", command="python run.py > out.log")
    todo = tool_use(
        "TodoWrite",
        "t3",
        todos=[
            {"content": "write tests", "status": "pending"},
            {"content": "read docs", "status": "completed"},
        ],
    )
    messages = parse(
        [
            user("Fix `parse_date` in src/dates.py. Never touch the vendored code."),
            assistant("Editing.", bash),
            tool_result("t1", "2 passed"),
            assistant("Patching didn't work, using a regex instead.", failing),
            tool_result("t2", "Traceback:\nValueError: bad date", is_error=True),
            assistant("Next steps:\n- [ ] handle time zones", todo),
            tool_result("t3", "ok"),
            user("Now also update the changelog."),
        ]
    )
    assert extract_ledger(messages) == [
        Fact("goal", "Fix `parse_date` in src/dates.py. Never touch the vendored code."),
        Fact("instruction", "Never touch the vendored code."),
        Fact("identifier", "parse_date"),
        Fact("identifier", "src/dates.py"),
        Fact("command", "sed -i 's/a/b/' src/app.py && python -m pytest"),
        Fact("file_changed", "src/app.py (edited)"),
        Fact("failed_approach", "Patching didn't work, using a regex instead."),
        Fact("command", "python run.py > out.log (failed)"),
        Fact("file_changed", "out.log (written)"),
        Fact("todo", "handle time zones"),
        Fact("todo", "write tests"),
        Fact("request", "Now also update the changelog."),
        Fact("error", "bash `python run.py > out.log`: ValueError: bad date"),
    ]


def test_shell_reads_moves_and_deletes_are_files() -> None:
    call = tool_use("bash", "t1", command="cat a.txt; mv old.py new.py; rm -f junk.tmp")
    facts = extract_ledger(parse([user("go"), assistant(call), tool_result("t1", "")]))
    files = [f for f in facts if f.kind.startswith("file")]
    assert files == [
        Fact("file_read", "a.txt"),
        Fact("file_changed", "old.py (moved to new.py)"),
        Fact("file_changed", "new.py (created)"),
        Fact("file_changed", "junk.tmp (deleted)"),
    ]


def test_render_and_parse_round_trip() -> None:
    facts = [Fact("instruction", "Never push."), Fact("file_read", "a.py")]
    text = render_ledger(facts, dropped=2)
    assert text == (
        "## Ledger\n- [instruction] Never push.\n- [file_read] a.py\n"
        "- (2 more facts did not fit the ledger budget)"
    )
    assert parse_ledger(f"## Goals\nsummary\n\n{text}") == facts


def test_merge_keeps_earlier_facts_first_and_each_once() -> None:
    old = [Fact("command", "make"), Fact("file_read", "a.py")]
    new = [Fact("file_read", "a.py"), Fact("error", "boom")]
    assert merge(old, new) == [*old, Fact("error", "boom")]


def test_budget_takes_priority_then_recency_and_counts_the_rest() -> None:
    flags = " --flag" * 15  # each fact longer than the last line that would count it
    facts = [
        Fact("identifier", "x" * 100),
        Fact("command", f"old command{flags}"),
        Fact("instruction", "always lint"),
        Fact("command", f"new command{flags}"),
    ]
    # One token a character (`len`): a line's cost is then exact. The budget is what the
    # instruction and the newer command take: the older command does not fit.
    expected = [Fact("instruction", "always lint"), Fact("command", f"new command{flags}")]
    budget = len(render_ledger(expected, 2, {"command": 1, "identifier": 1}))
    kept, dropped = fit_budget(facts, budget, len)
    assert kept == expected
    assert dropped == 2


def test_guard_appends_the_ledger_and_reports_what_the_summary_stated() -> None:
    messages = parse(
        [user("Use uv instead of pip."), assistant(tool_use("read_file", path="a.py"))]
    )
    report = guard_summary("We read a.py.", messages, 1500, words)
    assert report.text == (
        "We read a.py.\n\n## Ledger\n- [file_read] a.py\n- [goal] Use uv instead of pip."
    )
    assert [(f.kind, stated) for f, stated in report.facts] == [
        ("file_read", True),
        ("goal", False),
    ]
    assert report.dropped == 0


def test_a_zero_budget_disables_the_ledger() -> None:
    report = guard_summary("S", parse([user("never stop")]), 0, words)
    assert (report.text, report.facts, report.dropped) == ("S", (), 0)


def test_facts_survive_successive_compactions_with_a_lossy_summarizer() -> None:
    first = parse([user("Never use tabs."), assistant(tool_use("bash", command="make test"))])
    summary = guard_summary("Generic summary.", first, 1500, words).text
    second = [summary_message(summary), *parse([user("next"), assistant("ok")])]
    summary = guard_summary("Shorter.", second, 1500, words).text
    third = [summary_message(summary), *parse([user("more")])]
    final = guard_summary("Nothing useful.", third, 1500, words)
    kept = {fact for fact, _ in final.facts}
    # The instruction is the goal's own words: the goal holds it, once.
    assert {Fact("command", "make test"), Fact("goal", "Never use tabs.")} <= kept


def test_a_ledger_the_llm_copied_is_replaced_not_doubled() -> None:
    messages = parse([user("never stop")])
    report = guard_summary("S\n## Ledger\n- [goal] stale", messages, 1500, words)
    assert report.text.count("## Ledger") == 1
    assert "stale" not in report.text


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "do",
                "not",
                "never",
                "instead",
                "gave",
                "up",
                "it",
                "didn't",
                "work",
                "x_y",
                "a.py",
                " ",
                "  ",
                "\t",
                "\n",
                ".",
                "!",
                "?",
                "-",
                "'",
                "Must",
                "AVOID",
                "\r",
                "\x0b",
                "\x85",
                "\u2028",
                "\u00a0",
                "é",
                "x" * 150,
                "ı",
                "ſ",
                "İ",
                "\u212a",
                "ſhould",
                "ıNSTEAD",
                "DON'T",
                "don't",
                "mustn't",
                "should",
                "of",
                "make",
                "sure",
                "doesn't",
                "approach",
                "another",
                "x" * 290,
            ]
        ),
        max_size=80,
    ).map("".join)
)
def test_sentences_matching_finds_what_filtering_every_sentence_finds(text: str) -> None:
    assert_sentences_as_before(text)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "do",
                "not",
                "Not",
                "NEVER",
                "never",
                "instead",
                "Instead",
                "of",
                "gave",
                "up",
                "didn't",
                "DIDN'T",
                "work",
                "make",
                "Sure",
                "should",
                "mustn't",
                "avoid",
                "prefer",
                "approach",
                "another",
                "x_y",
                "a.py",
                " ",
                "  ",
                "\t",
                "\n",
                "\r",
                "\x0b",
                "\x1c",
                ".",
                "!",
                "?",
                "-",
                "'",
                "x" * 150,
                "x" * 290,
            ]
        ),
        max_size=80,
    ).map("".join)
)
def test_sentences_of_ascii_text_are_found_as_case_insensitively(text: str) -> None:
    """ASCII text is lowercased and searched case-sensitively: the same sentences."""
    assert text.isascii()
    assert_sentences_as_before(text)


PATH_BEFORE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *["src", "a", "/", "//", ".", "py", "-", "_", " ", "\n", "é", "`", "x" * 9, "1"],
                *["~", "\t", "\u00a0", "\u2028", "\x1c", "\u3000", "(", ":"],
            ]
        ),
        max_size=40,
    ).map("".join)
)
def test_paths_found_in_the_words_with_a_slash_are_those_of_the_whole_text(text: str) -> None:
    assert _paths(text) == PATH_BEFORE.findall(text)


SWE_AGENT_EDIT_FAILURE = (
    "Your proposed edit has introduced new syntax error(s).\n\nERRORS:\n"
    "- E999 IndentationError: unexpected indent\n\n"
    "Your changes have NOT been applied.\n"
    "DO NOT re-run the same failed edit command. Running it again will lead to the same error."
)


def steered_session() -> list[dict[str, object]]:
    """A session in the Anthropic shape where the user steers and errors show only in text."""
    return [
        user("Add retries to the HTTP client."),
        assistant(tool_use("bash", "t1", command="pytest   -q  tests/test_http.py")),
        tool_result("t1", "bash: pytest: command not found"),
        user("Now also handle timeouts. Don't touch the vendored code."),
        assistant(tool_use("edit", "t2", command="edit 4:5\n  retry()\nend_of_edit")),
        tool_result("t2", SWE_AGENT_EDIT_FAILURE, is_error=True),
        assistant(tool_use("bash", "t3", command="pytest -q tests/test_http.py")),
        tool_result("t3", "3 passed"),
        user("Use exponential backoff."),
        assistant("Done."),
    ]


def as_openai(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """The same session in the OpenAI shape: `tool` messages carry no error flag."""
    out: list[dict[str, object]] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and isinstance(content, list):
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
                }
                for b in content
                if b["type"] == "tool_use"
            ]
            text = "".join(b["text"] for b in content if b["type"] == "text")
            out.append({"role": "assistant", "content": text or None, "tool_calls": calls or None})
        elif isinstance(content, list) and content and content[0]["type"] == "tool_result":
            for b in content:
                out.append(
                    {"role": "tool", "tool_call_id": b["tool_use_id"], "content": b["content"]}
                )
        else:
            out.append(message)
    return [{k: v for k, v in m.items() if v is not None} for m in out]


def test_errors_by_text_give_the_same_facts_in_both_shapes() -> None:
    anthropic = extract_ledger(parse(steered_session()))
    openai = extract_ledger(from_openai(as_openai(steered_session())))
    assert anthropic == openai
    errors = [f.text for f in anthropic if f.kind == "error"]
    assert errors == [
        "bash `pytest -q tests/test_http.py`: bash: pytest: command not found",
        "edit `edit 4:5 …`: - E999 IndentationError: unexpected indent",
    ]


def test_every_user_request_is_kept_and_commands_once_with_their_runs_counted() -> None:
    facts = extract_ledger(parse(steered_session()))
    assert [f for f in facts if f.kind in ("goal", "request")] == [
        Fact("goal", "Add retries to the HTTP client."),
        Fact("request", "Now also handle timeouts. Don't touch the vendored code."),
        Fact("request", "Use exponential backoff."),
    ]
    # The failed and the passing run are one command, run twice; its latest outcome counts.
    assert [f for f in facts if f.kind == "command"] == [
        Fact("command", "edit 4:5 (failed)"),
        Fact("command", "pytest -q tests/test_http.py (×2)"),
    ]


def test_paths_and_errors_are_kept_before_requests_and_commands() -> None:
    facts = [
        Fact("command", "make"),
        Fact("request", "please go on"),
        Fact("identifier", "x"),
        Fact("file_read", "a.py"),
        Fact("error", "boom"),
    ]
    expected = [Fact("error", "boom"), Fact("file_read", "a.py")]
    budget = len(render_ledger(expected, 3, {"command": 1, "identifier": 1, "request": 1}))
    kept, dropped = fit_budget(facts, budget, len)
    assert kept == expected
    assert dropped == 3


def test_a_fact_is_carried_across_three_compactions() -> None:
    first = parse(
        [
            user("Fix the parser."),
            assistant(tool_use("Read", "t1", file_path="src/parser.py")),
            tool_result("t1", "Traceback (most recent call last):\nKeyError: 'x'"),
        ]
    )
    summary = guard_summary("One.", first, 300, words).text
    for step in ("Two.", "Three."):
        later = [summary_message(summary), *parse([user(f"Step {step}"), assistant("ok")])]
        summary = guard_summary(step, later, 300, words).text
    facts = parse_ledger(summary)
    assert Fact("file_read", "src/parser.py") in facts
    assert Fact("error", "Read `src/parser.py`: KeyError: 'x'") in facts
    assert Fact("goal", "Fix the parser.") in facts
    assert [f for f in facts if f.kind == "request"] == [
        Fact("request", "Step Two."),
        Fact("request", "Step Three."),
    ]


def test_a_dot_inside_a_name_ends_no_sentence() -> None:
    text = (
        "Now I'll update the `upload.ts` file to use the new GCS storage module instead of "
        "firebase-admin: done. Next v1.2 must not break."
    )
    first = (
        "Now I'll update the `upload.ts` file to use the new GCS storage module instead of "
        "firebase-admin: done."
    )
    assert list(_sentences_matching(text, _ABANDONED)) == [first]
    assert list(_sentences_matching(text, _INSTRUCTION)) == [first, "Next v1.2 must not break."]


def test_facts_after_the_first_of_their_kind_go_untagged_and_parse_back() -> None:
    facts = [
        Fact("file_read", "a.py"),
        Fact("file_read", "b.py"),
        Fact("command", "make"),
        Fact("command", "[error] looks like a tag"),
    ]
    text = render_ledger(facts)
    assert text == (
        "## Ledger\n- [file_read] a.py\n- b.py\n- [command] make\n"
        "- [command] [error] looks like a tag"
    )
    assert parse_ledger(f"Body.\n\n{text}\n\n> Recall: call `recall`.\n- not a fact") == facts
    # A ledger written one tag a line (earlier versions) still parses.
    assert parse_ledger("## Ledger\n- [file_read] a.py\n- [file_read] b.py") == facts[:2]


def test_the_rendered_ledger_never_exceeds_its_budget() -> None:
    facts = [Fact("command", f"run step {i}") for i in range(30)]
    for budget in (10, 25, 40, 80):
        kept, _ = fit_budget(facts, budget, len)  # one token a character: joins add up
        assert len(render_ledger(kept, len(facts) - len(kept))) <= budget or not kept


def test_an_errors_call_is_named_short_without_its_leading_cd() -> None:
    long = "cd /home/me/projects/some/deep/checkout && python -m pytest tests/unit/web -x -q -k api"
    messages = parse(
        [
            user("Run the tests."),
            assistant(tool_use("bash", "t1", command=long)),
            tool_result("t1", "FAILED tests/unit/web/test_api.py::test_x - KeyError"),
        ]
    )
    errors = [f.text for f in extract_ledger(messages) if f.kind == "error"]
    assert errors == [
        "bash `python -m pytest tests/unit/web -x -q -k api`: "
        "FAILED tests/unit/web/test_api.py::test_x - KeyError"
    ]
    commands = [f.text for f in extract_ledger(messages) if f.kind == "command"]
    assert commands == [f"{long} (failed)"]


def test_a_long_request_with_pasted_output_is_kept_by_its_first_line() -> None:
    log = "\n".join(f"[10:00:0{i}] DEBUG step {i} of the run went fine" for i in range(9))
    messages = parse([user("Fix the parser."), assistant("ok"), user(f"It still fails:\n{log}")])
    requests = [f.text for f in extract_ledger(messages) if f.kind == "request"]
    assert requests == ["It still fails: …"]
    short = parse([user("Fix the parser."), assistant("ok"), user("Try\nmake test")])
    assert [f.text for f in extract_ledger(short) if f.kind == "request"] == ["Try make test"]


def test_commands_the_summary_lists_whole_are_carried_by_it_not_repeated() -> None:
    first = parse([user("Build it."), assistant(tool_use("bash", "t1", command="make build"))])
    summary = "## Tool Calls\n- Recent commands, oldest first:\n  - `make build`\n  - `make very …`"
    report = guard_summary(summary, first, 1500, words)
    assert "[command]" not in report.text.split("## Ledger", 1)[1]
    assert (Fact("command", "make build"), True) in report.facts
    # A later summarizer that lists nothing: the command comes back from the summary it
    # was listed in, into the ledger.
    later = [summary_message(report.text), *parse([user("next"), assistant("ok")])]
    final = guard_summary("Nothing useful.", later, 1500, words)
    assert Fact("command", "make build") in parse_ledger(final.text)


def test_a_failed_command_the_summary_also_lists_stays_failed() -> None:
    text = (
        "[Conversation compressed]\n## Tool Calls\n- Recent commands, oldest first:\n"
        "  - `make build`\n  - `make test`\n\n## Ledger\n- [command] make build (failed)"
    )
    messages = [summary_message(text.split("\n", 1)[1]), *parse([user("next")])]
    commands = [f.text for f in previous_ledgers(messages) if f.kind == "command"]
    assert commands == ["make build (failed)", "make test"]


def test_every_alternative_of_a_phrase_pattern_starts_with_one_of_its_firsts() -> None:
    """The ASCII search tries the pattern only where one of `firsts` stands."""
    for phrases in (_INSTRUCTION, _ABANDONED):
        group = re.search(r"\((.*)\)", phrases.lowered.pattern)
        assert group is not None
        for alternative in group.group(1).split("|"):
            assert alternative.removeprefix(r"\b").startswith(phrases.firsts), alternative


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["word", "x" * 97, " ", "   ", "\n", "\n\n", "\r\n", "\t", " …", "é", "```", "[10:00]"]
        ),
        max_size=60,
    ).map("".join)
)
def test_a_request_is_whole_when_short_and_never_longer_than_a_fact(words: str) -> None:
    kept = request_fact(words, 300)
    flat = " ".join(words.split())
    assert kept == flat if len(flat) <= 300 else len(kept) <= 300 and kept.endswith(" …")


LOG = "\n".join(
    f"2026-11-25T10:00:{i:02d}Z ERROR pod api-7f9 crashed: exit code 137 (OOMKilled)"
    for i in range(60)
)
TRACE = (
    "Traceback (most recent call last):\n"
    + '  File "app/deploy.py", line 12, in main\n    client.apply(manifest)\n' * 20
    + "ValueError: memory limit must be a quantity"
)
URL = "https://console.cloud.google.com/logs/query;query=" + "resource.type%3D%22k8s%22" * 20


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            f"The deploy still fails, here is the log:\n{LOG}\n"
            "Can you find why the api pod is killed and raise its memory limit?",
            "The deploy still fails, here is the log: … Can you find why the api pod is "
            "killed and raise its memory limit? …",
        ),
        (
            f"```\n{TRACE}\n```\nSame error as before after your change. Please revert it.",
            "Same error as before after your change. Please revert it. …",
        ),
        (
            f"Look at {URL} and tell me which service logs the most errors since Monday",
            f"Look at {URL[:39]}… and tell me which service logs the most errors since Monday …",
        ),
        (f"{TRACE}", "Traceback (most recent call last): …"),
    ],
)
def test_a_request_that_is_mostly_pasted_keeps_the_users_own_words(text: str, kept: str) -> None:
    messages = parse([user("Fix the deploy."), assistant("ok"), user(text)])
    assert [f.text for f in extract_ledger(messages) if f.kind == "request"] == [kept]


def test_table_fragments_and_numbers_never_become_identifiers() -> None:
    table = (
        "| line | note |\n|---|---|\n`| L738 |` `L738` `#L10-L20` `| parse |` `123` `1.2.3` `--`"
    )
    said = "Keep `parse_date`, `E501` and `v2` in src/dates.py; see `| L12 |` and `42`."
    messages = parse(
        [
            user(said),
            assistant(tool_use("grep", "t1", pattern="parse")),
            tool_result("t1", f"{table}\n`load_config` at `L738`"),
        ]
    )
    identifiers = [f.text for f in extract_ledger(messages) if f.kind == "identifier"]
    assert identifiers == ["parse_date", "E501", "v2", "src/dates.py", "load_config"]


def test_commands_that_differ_in_their_numbers_share_one_line() -> None:
    calls = []
    for i, seconds in enumerate((5, 10, 30, 30)):
        calls += [assistant(tool_use("bash", f"s{i}", command=f"sleep {seconds}"))]
        calls += [tool_result(f"s{i}", "")]
    messages = parse([user("Wait for the deploy."), *calls, user("Go on.")])
    report = guard_summary("Waited.", messages, 1500, words)
    assert report.text.endswith("- [commands] sleep: 5 · 10 · 30 (×2)")
    assert report.dropped == 0


def test_a_failure_in_unflagged_output_is_an_error_fact_naming_its_command_and_test() -> None:
    go = (
        "=== RUN   TestTotal\n    cart_test.go:21: total = 100, want 90\n"
        "--- FAIL: TestTotal (0.00s)\nFAIL"
    )
    session = [
        user("Fix the cart."),
        assistant(tool_use("bash", "t1", command="cd /srv/shop && go test ./cart/...")),
        tool_result("t1", go),
        assistant(tool_use("bash", "t2", command="curl -si localhost:8080/cart/7")),
        tool_result("t2", "HTTP/1.1 500 Internal Server Error\ncontent-length: 0"),
        assistant(tool_use("bash", "t3", command="npx tsc --noEmit")),
        tool_result("t3", "src/cart.ts(12,5): error TS2345: Argument of type 'string'."),
        user("Go on."),
    ]
    anthropic = extract_ledger(parse(session))
    assert anthropic == extract_ledger(from_openai(as_openai(session)))
    assert [f.text for f in anthropic if f.kind == "error"] == [
        "bash `go test ./cart/...`: --- FAIL: TestTotal (0.00s) | cart_test.go:21: total = 100,"
        " want 90",
        "bash `curl -si localhost:8080/cart/7`: HTTP/1.1 500 Internal Server Error",
        "bash `npx tsc --noEmit`: src/cart.ts(12,5): error TS2345: Argument of type 'string'.",
    ]
    commands = [f.text for f in anthropic if f.kind == "command"]
    assert commands == [
        "cd /srv/shop && go test ./cart/... (failed)",
        "curl -si localhost:8080/cart/7 (failed)",
        "npx tsc --noEmit (failed)",
    ]


def test_a_commands_runs_add_up_across_compactions() -> None:
    earlier = user(f"{SUMMARY_PREFIX}Done.\n\n## Ledger\n- [command] pnpm run build (×2)")
    runs = [
        assistant(tool_use("bash", "b1", command="pnpm run build")),
        tool_result("b1", "error: Cannot find module 'vite'"),
    ]
    facts = merge(previous_ledgers(parse([earlier])), extract_ledger(parse([user("Go."), *runs])))
    assert [f.text for f in facts if f.kind == "command"] == ["pnpm run build (×3) (failed)"]


def test_an_error_in_a_result_whose_call_stayed_behind_is_a_fact() -> None:
    """A strategy may cut a tool result and keep the call: the failure stays a fact."""
    covered = parse(
        [
            user("Deploy."),
            tool_result("k1", 'Error from server (NotFound): deployments.apps "api" not found'),
        ]
    )
    errors = [f.text for f in extract_ledger(covered) if f.kind == "error"]
    assert errors == [
        'an earlier call: Error from server (NotFound): deployments.apps "api" not found'
    ]


def test_an_error_message_many_calls_met_is_one_error_at_its_latest_call() -> None:
    blocked = "Error: Bash operation blocked by hook:"
    calls = []
    for i, command in enumerate(("pwd", "ls docs", "git add .")):
        calls += [assistant(tool_use("Bash", f"b{i}", command=command))]
        calls += [tool_result(f"b{i}", blocked, is_error=True)]
    calls += [assistant(tool_use("Bash", "b9", command="make")), tool_result("b9", "done")]
    messages = parse([user("Tidy the repo."), *calls, user("Go on.")])
    facts = extract_ledger(messages)
    assert [f.text for f in facts if f.kind == "error"] == [f"Bash `git add .`: {blocked} (×3)"]
    commands = [f.text for f in facts if f.kind == "command"]
    assert commands == ["pwd (failed)", "ls docs (failed)", "git add . (failed)", "make"]
    # Carried by a ledger and met again, it still counts every call, the latest one shown.
    again = parse([user("More."), *calls[:2], user("Go on.")])
    merged = merge(parse_ledger(render_ledger(facts)), extract_ledger(again, goal_known=True))
    assert [f.text for f in merged if f.kind == "error"] == [f"Bash `pwd`: {blocked} (×4)"]


def test_the_same_error_of_file_calls_stays_apart_each_with_its_path() -> None:
    calls = []
    for i, path in enumerate(("docs/a.md", "docs/b.md")):
        calls += [assistant(tool_use("read_file", f"r{i}", absolute_path=path))]
        calls += [tool_result(f"r{i}", "Error: File not found.", is_error=True)]
    facts = extract_ledger(parse([user("Read the docs."), *calls, user("Go on.")]))
    assert [f.text for f in facts if f.kind == "error"] == [
        "read_file `docs/a.md`: Error: File not found.",
        "read_file `docs/b.md`: Error: File not found.",
    ]


def test_a_file_read_and_changed_is_listed_once_with_its_change() -> None:
    # The changed file's line names the path and what was done to it; a read of it would
    # be a second copy of the path. A file only read keeps its line.
    messages = parse(
        [
            user("Fix the parser."),
            assistant(tool_use("Read", "t1", file_path="src/parser.py")),
            tool_result("t1", "def parse(): ..."),
            assistant(tool_use("Read", "t2", file_path="src/lexer.py")),
            tool_result("t2", "def lex(): ..."),
            assistant(
                tool_use("Edit", "t3", file_path="src/parser.py", old_string="a", new_string="b")
            ),
            tool_result("t3", "ok"),
        ]
    )
    report = guard_summary("Fixed.", messages, 1500, words)
    assert report.text == (
        "Fixed.\n\n## Ledger\n- [file_changed] src/parser.py (edited)\n"
        "- [file_read] src/lexer.py\n- [goal] Fix the parser."
    )
    # A read carried in an earlier ledger goes too once a later part changes the file.
    first = parse([user("Look at the lexer."), assistant(tool_use("Read", "t1", file_path="a.py"))])
    summary = guard_summary("Read.", first, 1500, words).text
    assert "- [file_read] a.py" in summary
    later = [
        summary_message(summary),
        *parse(
            [
                user("Now change it."),
                assistant(tool_use("Write", "t2", file_path="a.py", content="x = 1")),
                tool_result("t2", "ok"),
            ]
        ),
    ]
    final = guard_summary("Changed.", later, 1500, words).text
    ledger = final.split("## Ledger\n", 1)[1]
    assert "[file_read]" not in ledger
    assert "a.py (" in ledger
