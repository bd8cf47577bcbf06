import pytest

from app.core.assemble import RestoredFile
from app.core.ports import FileSkip, FileText, SkipReason
from app.core.restore.plan import (
    READ_TOOL_PRESETS,
    FileReadTool,
    RestoreLimits,
    plan_restore,
    read_tools_from,
    select_restored,
)
from tests.builders import assistant, parse, read_round, tool_use, user

SEED = (FileReadTool("read_file", "path"),)


def test_plan_orders_by_most_recent_read_and_deduplicates() -> None:
    messages = parse(
        [
            user("go"),
            *read_round("a.py"),
            *read_round("b.py"),
            *read_round("a.py"),  # a.py read again: it moves to the front
            *read_round("c.py"),
        ]
    )
    assert plan_restore(messages, SEED, 5) == ["c.py", "a.py", "b.py"]


def test_plan_takes_the_first_max_files() -> None:
    messages = parse([user("go"), *(m for p in "abcdefg" for m in read_round(f"{p}.py"))])
    assert plan_restore(messages, SEED, 5) == ["g.py", "f.py", "e.py", "d.py", "c.py"]


def test_plan_with_zero_max_files_restores_nothing() -> None:
    assert plan_restore(parse([user("go"), *read_round("a.py")]), SEED, 0) == []


def test_plan_counts_several_reads_in_one_message_in_order() -> None:
    messages = parse([assistant(tool_use("read_file", path="x"), tool_use("read_file", path="y"))])
    assert plan_restore(messages, SEED, 5) == ["y", "x"]


def test_plan_ignores_other_tools_users_and_non_string_paths() -> None:
    messages = parse(
        [
            assistant(tool_use("write_file", path="w.py")),
            assistant(tool_use("read_file", path=["not", "a", "string"])),
            assistant(tool_use("read_file", file_path="wrong-field.py")),
            {"role": "user", "content": [tool_use("read_file", path="user-side.py")]},
        ]
    )
    assert plan_restore(messages, SEED, 5) == []


def test_plan_follows_a_configured_vocabulary() -> None:
    tools = (FileReadTool.parse("Read.file_path"), FileReadTool.parse("view.path"))
    messages = parse(
        [
            assistant(tool_use("Read", file_path="/w/a.py")),
            assistant(tool_use("view", path="b.py")),
            assistant(tool_use("read_file", path="seed.py")),
        ]
    )
    assert plan_restore(messages, tools, 5) == ["b.py", "/w/a.py"]


def test_editor_view_counts_only_with_the_view_command() -> None:
    tools = read_tools_from(["swe_agent"])
    messages = parse(
        [
            assistant(tool_use("str_replace_editor", command="view", path="/repo/a.py")),
            assistant(tool_use("str_replace_editor", command="create", path="/repo/new.py")),
            assistant(tool_use("str_replace_editor", command="str_replace", path="/repo/b.py")),
        ]
    )
    assert plan_restore(messages, tools, 5) == ["/repo/a.py"]


@pytest.mark.parametrize(
    ("preset", "call", "path"),
    [
        ("seed000", tool_use("read_file", path="a.py"), "a.py"),
        ("claude_code", tool_use("Read", file_path="/w/a.py"), "/w/a.py"),
        ("swe_agent", tool_use("str_replace_editor", command="view", path="a.py"), "a.py"),
        ("openhands", tool_use("str_replace_editor", command="view", path="a.py"), "a.py"),
        ("mcp_filesystem", tool_use("read_text_file", path="/p/a.md"), "/p/a.md"),
        ("mcp_filesystem", tool_use("read_file", path="/p/b.md"), "/p/b.md"),
        ("all", tool_use("Read", file_path="c.py"), "c.py"),
    ],
)
def test_each_preset_recognizes_its_agents_reads(
    preset: str, call: dict[str, object], path: str
) -> None:
    assert plan_restore(parse([assistant(call)]), read_tools_from([preset]), 5) == [path]


def test_presets_and_specs_mix_without_duplicates() -> None:
    tools = read_tools_from(["seed000", "read_file.path", "view.path[command=show]"])
    assert tools == (FileReadTool("read_file", "path"), FileReadTool("view", "path", "show"))
    assert str(tools[1]) == "view.path[command=show]"
    assert set(READ_TOOL_PRESETS["all"]) >= set(READ_TOOL_PRESETS["claude_code"])


@pytest.mark.parametrize("spec", ["read_file", ".path", "read_file.", "", "a.b[cmd=x]"])
def test_read_tool_spec_must_name_tool_and_field(spec: str) -> None:
    with pytest.raises(ValueError, match=r"tool_name\.path_field"):
        FileReadTool.parse(spec)


LIMITS = RestoreLimits(max_files=5, max_tokens_per_file=100, max_tokens_total=150)


def test_select_skips_files_over_the_per_file_limit_and_continues() -> None:
    reads = [FileText("big", "B"), FileText("ok", "O")]
    selection = select_restored(reads, {"big": 101, "ok": 100}, LIMITS)
    assert selection.restored == (RestoredFile("ok", "O", 100),)
    assert selection.skipped == (FileSkip("big", SkipReason.TOO_MANY_TOKENS),)


def test_select_stops_at_the_total_limit() -> None:
    reads = [FileText("a", "A"), FileText("b", "B"), FileText("c", "C")]
    selection = select_restored(reads, {"a": 100, "b": 60, "c": 10}, LIMITS)
    assert selection.restored == (RestoredFile("a", "A", 100),)
    assert selection.skipped == (
        FileSkip("b", SkipReason.TOTAL_LIMIT_REACHED),
        FileSkip("c", SkipReason.TOTAL_LIMIT_REACHED),
    )
    assert selection.token_count == 100


def test_select_keeps_read_skips_with_their_reason_and_restores_empty_files() -> None:
    reads = [FileSkip("gone", SkipReason.NOT_FOUND), FileText("empty", "")]
    selection = select_restored(reads, {"empty": 0}, LIMITS)
    assert selection.restored == (RestoredFile("empty", "", 0),)
    assert selection.skipped == (FileSkip("gone", SkipReason.NOT_FOUND),)


def test_every_file_over_the_limit_restores_nothing() -> None:
    reads = [FileText("a", "A"), FileText("b", "B")]
    selection = select_restored(reads, {"a": 500, "b": 101}, LIMITS)
    assert selection.restored == ()
    assert [s.reason for s in selection.skipped] == [SkipReason.TOO_MANY_TOKENS] * 2


def test_byte_cap_follows_the_token_limit() -> None:
    assert RestoreLimits(5, 5000, 50000).max_bytes_per_file == 160_000
