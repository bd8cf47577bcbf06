"""The summary's list of recent commands read back: what a later compaction carries."""

from hypothesis import given
from hypothesis import strategies as st

from app.core.history import COMMANDS_LINE, command_item, listed_commands
from app.core.history.facts import COMMAND_CHARS


def _summary(*commands: str) -> str:
    items = "\n".join(command_item(c) for c in commands)
    return f"## Tool Calls\n{COMMANDS_LINE}:\n{items}\n\n## Errors\n- none"


def test_a_command_of_several_lines_is_read_back_whole() -> None:
    script = 'echo "# Moved files:\n- a.md (duplicate)\n  - b.md" > MOVED.md'
    assert (
        command_item(script)
        == '  - `echo "# Moved files:\n    - a.md (duplicate)\n      - b.md" > MOVED.md`'
    )
    assert listed_commands(_summary("make", script, "ls -la")) == [
        "make",
        'echo "# Moved files: - a.md (duplicate) - b.md" > MOVED.md',
        "ls -la",
    ]


def test_a_first_line_ending_in_a_backtick_does_not_end_the_command() -> None:
    assert listed_commands(_summary("x=`date`\necho $x", "pwd")) == ["x=`date` echo $x", "pwd"]


def test_a_command_cut_short_is_not_read_as_a_command() -> None:
    long = "python -c '" + "a" * COMMAND_CHARS + "'"
    assert command_item(long).endswith(" …`")
    assert listed_commands(_summary("make", long, "pwd")) == ["make", "pwd"]


def test_the_list_ends_at_the_first_line_that_is_not_an_item() -> None:
    text = f"{COMMANDS_LINE}:\n  - `make\n    test`\nnot an item\n  - `pwd`"
    assert listed_commands(f"## Tool Calls\n{text}") == ["make test"]


@given(
    st.lists(
        st.text(st.sampled_from("ab `\n \t…"), min_size=1, max_size=40).filter(str.strip),
        max_size=5,
    )
)
def test_every_command_listed_whole_is_read_back_whitespace_collapsed(commands: list[str]) -> None:
    """Those that end in `…` read as cut short, as those cut short are."""
    flat = [" ".join(c.split()) for c in commands]
    assert listed_commands(_summary(*commands)) == [c for c in flat if not c.endswith(" …")]
