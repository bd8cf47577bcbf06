from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import RecallDeadlineError
from app.core.history.failures import CLEARED_PREFIX
from app.core.ledger.lines import LEDGER_HEADING
from app.core.recall.search import (
    ARCHIVED_SUMMARY_TITLE,
    CLEARED_OPENER,
    LEDGER_OPENER,
    check_deadline,
    index_archive,
    recall_note,
    search,
)
from app.core.summary.prompt import ARCHIVED_TITLE

ANTHROPIC = [
    {"role": "user", "content": "Fix the date parser."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest -x"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": "E   ValueError: month must be in 1..12\nFAILED tests/test_dates.py",
                "is_error": True,
            }
        ],
    },
]
OPENAI = [
    {"role": "user", "content": "Now the time zones."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "src/tz.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "def to_utc(value):\n    return value"},
]


def test_entries_name_the_role_and_the_tool_in_both_shapes() -> None:
    entries = index_archive(ANTHROPIC)
    assert [(e.message_index, e.role, e.tool_name) for e in entries] == [
        (0, "user", None),
        (1, "assistant", "bash"),
        (2, "user", "bash"),
    ]
    assert '"command": "pytest -x"' in entries[1].text
    entries = index_archive(OPENAI)
    assert [(e.role, e.tool_name) for e in entries] == [
        ("user", None),
        ("assistant", "read_file"),
        ("tool", "read_file"),
    ]


def test_the_best_match_comes_first_with_its_archive_and_index() -> None:
    archives = [("a1", index_archive(ANTHROPIC)), ("a2", index_archive(OPENAI))]
    hits = search(archives, "ValueError month", limit=5)
    assert [(h.archive_id, h.message_index, h.role, h.tool_name) for h in hits] == [
        ("a1", 2, "user", "bash")
    ]
    assert hits[0].snippet == "E ValueError: month must be in 1..12 FAILED tests/test_dates.py"
    assert [h.archive_id for h in search(archives, "to_utc src/tz.py", 5)] == ["a2", "a2"]


def test_ties_go_to_the_newer_archive_and_the_limit_holds() -> None:
    archives = [("old", index_archive(ANTHROPIC)), ("new", index_archive(ANTHROPIC))]
    hits = search(archives, "pytest", limit=1)
    assert [(h.archive_id, h.message_index) for h in hits] == [("new", 1)]
    assert search(archives, "nothing-like-this", 5) == []
    assert search(archives, "  ...  ", 5) == []


def said(text: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": text}]


def test_a_snippet_is_cut_around_the_match() -> None:
    archives = [("a", index_archive(said("x " * 500 + "NEEDLE here " + "y " * 500)))]
    [hit] = search(archives, "needle", 5, snippet_chars=100)
    assert hit.snippet.startswith("… x")
    assert hit.snippet.endswith("y …")
    assert "NEEDLE here" in hit.snippet
    assert len(hit.snippet) <= 104


@pytest.mark.parametrize("before", ["İ" * 3000, "ß" * 3000, "ﬁ" * 3000, "ŉ" * 2000 + "Σ" * 999])
def test_a_snippet_holds_its_match_after_text_whose_folded_form_is_longer(before: str) -> None:
    archives = [("a", index_archive(said(before + " needle-token-77 " + "after " * 500)))]
    [hit] = search(archives, "needle-token-77", 5)
    assert "needle-token-77 after after" in hit.snippet


def test_a_word_matches_whatever_its_case_and_folding() -> None:
    archives = [("a", index_archive(said("STRASSE İSTANBUL ﬁle Café")))]
    for query in ("straße", "i̇stanbul", "istanbul", "İstanbul", "FILE", "cafe", "CAFÉ"):
        assert len(search(archives, query, 5)) == 1, query
    assert search(archives, "stras", 5) == []  # whole words, not parts of them


EXPANDING = st.sampled_from(["İ", "ß", "ﬁ", "ŉ", "ΐ", "Σ", "a", " ", "\n", "é", "_", "."])


@given(
    before=st.text(EXPANDING, max_size=1500),
    after=st.text(EXPANDING, max_size=300),
    word=st.from_regex(r"[a-z][a-z0-9]{2,12}", fullmatch=True),
)
def test_the_snippet_always_holds_the_first_match(before: str, after: str, word: str) -> None:
    text = f"{before} {word.upper()} {after}"
    [hit] = search([("a", index_archive(said(text)))], word, 5)
    assert word.upper() in hit.snippet.replace("… ", "")


def test_the_same_message_archived_twice_is_returned_once() -> None:
    messages = said("deploy key rotated") + said("other deploy notes")
    archives = [("a1", index_archive(messages)), ("a2", index_archive(messages))]
    hits = search(archives, "deploy key", 5)
    assert [(h.archive_id, h.message_index) for h in hits] == [("a2", 0), ("a2", 1)]


def test_only_the_first_64_terms_are_searched() -> None:
    words = [f"w{i}" for i in range(70)]
    archives = [("a", index_archive(said("w69 is here") + said("w3 is here")))]
    hits = search(archives, " ".join(words), 5)
    assert [h.message_index for h in hits] == [1]


def test_check_deadline_stops_once_no_time_is_left() -> None:
    check_deadline(lambda: 0.5)
    with pytest.raises(RecallDeadlineError, match="deadline"):
        check_deadline(lambda: 0.0)


def test_the_closing_note_names_the_route_of_the_session() -> None:
    assert "POST /sessions/s-9/recall" in recall_note("s-9")


def test_originals_come_before_the_summaries_that_copy_them() -> None:
    call = {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "t9",
                "name": "Bash",
                "input": {"command": "kubectl rollout restart deploy/api"},
            }
        ],
    }
    summaries = [
        {
            "role": "user",
            "content": f"[Conversation compressed]\n\n## Ledger\n- [command] "
            f"kubectl rollout restart deploy/api (summary {n})",
        }
        for n in range(5)
    ]
    ledger = {
        "role": "system",
        "content": "## Ledger\n- [command] kubectl rollout restart deploy/api",
    }
    archives = [
        ("a1", index_archive([call])),
        *((f"s{n}", index_archive([s, ledger])) for n, s in enumerate(summaries)),
    ]
    hits = search(archives, "kubectl rollout restart deploy/api", 3)
    assert hits[0].archive_id == "a1"
    assert len({(h.role, h.snippet) for h in hits}) == len(hits)


def test_a_query_only_a_summary_answers_still_finds_it() -> None:
    summary = {"role": "user", "content": "[Conversation compressed]\n\nThe goal: migrate to pnpm."}
    hits = search([("a1", index_archive([summary, *said("unrelated words")]))], "pnpm", 5)
    assert [(h.archive_id, h.message_index) for h in hits] == [("a1", 0)]


def test_the_copy_openers_recall_spells_are_those_the_service_writes() -> None:
    written = (ARCHIVED_TITLE, f"{LEDGER_HEADING}\n", CLEARED_PREFIX)
    assert written == (ARCHIVED_SUMMARY_TITLE, LEDGER_OPENER, CLEARED_OPENER)


# The shapes of the facts recall missed in a Claude Code session of the wide corpus (a
# compaction's later requests and paths, queried as typed): the message that is the fact
# is short, and long messages mention its words many times over.
LONG_MENTIONS = [
    {"role": "user", "content": "Read the Hooks docs. " + "hooks: PreToolUse hooks run. " * 8},
    {"role": "assistant", "content": "The hooks config: " + "hooks, hooks and more hooks. " * 6},
    {"role": "user", "content": "Hooks"},
    {"role": "user", "content": "sys.exit(0)\n" * 6 + "if blocked: sys.exit(2)  # exit the hook"},
    {"role": "user", "content": "/exit /hi is running…"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check the script:"},
            {
                "type": "tool_use",
                "id": "r1",
                "name": "Read",
                "input": {"file_path": "../../.claude/validate_git_commands.py"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "r1",
                "content": "# validate_git_commands.py: claude's hook\n"
                + "claude/validate_git_commands.py blocks git add -A; " * 5,
            }
        ],
    },
]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("Hooks", 2),  # a one-word request
        ("/exit", 4),  # a slash command the user typed
        ("../../.claude/validate_git_commands.py", 5),  # the call that names the path
    ],
)
def test_the_message_that_is_the_query_comes_before_long_ones_that_repeat_its_words(
    query: str, first: int
) -> None:
    """Its words counted alone, each long message scores as much; the share of the message
    the query makes up puts the short one first."""
    hits = search([("a1", index_archive(LONG_MENTIONS))], query, limit=1)
    assert [h.message_index for h in hits] == [first]


def test_the_share_of_the_message_the_query_makes_up_adds_to_the_score() -> None:
    hits = search([("a1", index_archive(LONG_MENTIONS))], "Hooks", limit=3)
    # 10 + its count (at most 5), plus 30 x the query's characters over the message's;
    # a tie goes to the later message.
    assert [(h.message_index, h.score) for h in hits] == [(2, 41), (1, 15), (0, 15)]
