from __future__ import annotations

from app.core.recall import index_archive, recall_note, search, snippet, terms

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


def test_a_snippet_is_cut_around_the_match() -> None:
    [entry] = index_archive([{"role": "user", "content": "x " * 500 + "NEEDLE here " + "y " * 500}])
    text = snippet(entry, terms("needle"), "needle", 100)
    assert text.startswith("… x")
    assert text.endswith("y …")
    assert "NEEDLE here" in text
    assert len(text) <= 104


def test_the_closing_note_names_the_route_of_the_session() -> None:
    assert "POST /sessions/s-9/recall" in recall_note("s-9")
