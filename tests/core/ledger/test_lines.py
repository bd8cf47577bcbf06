from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.ledger.lines import Fact, parse_ledger, program_of, render_ledger


def test_commands_of_one_program_share_a_line_and_parse_back_one_by_one() -> None:
    facts = [
        Fact("error", "bash `gcloud sql instances create db`: ERROR: (gcloud) HTTPError 403"),
        Fact("command", "gcloud auth login"),
        Fact("command", "terraform init"),
        Fact("command", "gcloud projects create demo-42 (failed)"),
        Fact("command", "cd /srv && gcloud sql instances create db --tier=db-f1-micro"),
        Fact("command", "gcloud sql instances create db --tier=db-f1-micro"),
        Fact("command", "ls"),
    ]
    text = render_ledger(facts)
    assert text == (
        "## Ledger\n"
        "- [error] bash `gcloud sql instances create db`: ERROR: (gcloud) HTTPError 403\n"
        "- [commands] gcloud: auth login · projects create demo-42 (failed)"
        " · sql instances create db --tier=db-f1-micro\n"
        "- terraform init\n"
        "- cd /srv && gcloud sql instances create db --tier=db-f1-micro\n"
        "- ls"
    )
    parsed = parse_ledger(text)
    assert sorted(parsed, key=facts.index) == facts


def test_a_command_that_could_not_be_split_back_is_never_grouped() -> None:
    assert program_of("echo a · b") is None
    assert program_of("make") is None
    assert program_of('cd "a: b" && make test') is None
    assert program_of("FOO=1 sudo make test") == ("FOO=1 sudo make", "test")
    facts = [Fact("command", "echo a · b"), Fact("command", "echo c")]
    assert render_ledger(facts) == "## Ledger\n- [command] echo a · b\n- echo c"
    assert parse_ledger(render_ledger(facts)) == facts


def test_the_last_line_counts_what_was_left_out_by_kind_and_says_recall_has_it() -> None:
    text = render_ledger([Fact("goal", "Migrate.")], 5, {"identifier": 1, "command": 4})
    assert text.splitlines()[-1] == (
        "- (5 more facts did not fit the ledger budget: 4 command, 1 identifier; recall has them)"
    )
    assert parse_ledger(text) == [Fact("goal", "Migrate.")]
    # The line earlier versions wrote, without kinds, is still no fact.
    assert parse_ledger(
        "## Ledger\n- [goal] Migrate.\n- (2 more facts did not fit the ledger budget)"
    ) == [Fact("goal", "Migrate.")]


_WORDS = st.sampled_from(
    [
        "gcloud",
        "make",
        "cd /srv &&",
        "X=1",
        "a:",
        "·",
        "[commands]",
        "[command]",
        "test",
        "-v",
        "(failed)",
        "'q r'",
    ]
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=6).map(" ".join), max_size=8, unique=True))
def test_any_commands_parse_back_from_their_rendered_ledger(commands: list[str]) -> None:
    facts = [Fact("command", c) for c in commands]
    assert sorted(parse_ledger(render_ledger(facts)), key=facts.index) == facts


def test_a_program_ending_in_a_colon_is_never_grouped() -> None:
    # Found by the property test above: `a:` then its group line's own `: ` split wrongly.
    facts = [Fact("command", "a: cd /srv &&"), Fact("command", "a: cd /srv && gcloud")]
    assert program_of(facts[0].text) is None
    assert parse_ledger(render_ledger(facts)) == facts


def test_the_words_a_programs_commands_share_are_written_once_and_parse_back() -> None:
    commands = [
        "docker compose -f deploy/compose.yml up -d api",
        "docker compose -f deploy/compose.yml logs api --tail 50 (failed)",
        "docker compose -f deploy/compose.yml up -d api (×3)",
        "dotnet test",
    ]
    facts = [Fact("command", c) for c in commands]
    text = render_ledger(facts)
    assert text.splitlines()[1] == (
        "- [commands] docker compose -f deploy/compose.yml: up -d api · "
        "logs api --tail 50 (failed) · up -d api (×3)"
    )
    assert parse_ledger(text) == facts


def test_a_command_of_one_word_keeps_its_group_at_the_program() -> None:
    facts = [Fact("command", "make"), Fact("command", "make test")]
    assert render_ledger(facts).splitlines()[1] == "- [command] make"


def test_runs_that_share_more_words_among_themselves_get_a_line_of_their_own() -> None:
    db = "~/Library/Containers/app/Data/Documents/Library/Library-main.sqlite"
    commands = [
        f'sqlite3 {db} ".tables"',
        "sqlite3 fixtures/test.sqlite .schema",
        f'sqlite3 {db} "SELECT title FROM books" (×2)',
        f'sqlite3 {db} "SELECT state FROM books WHERE id = 4" (failed)',
        "git add docs/a.md",
        "git status",
        "git add docs/b.md docs/c.md",
        "git add TODO.md",
    ]
    facts = [Fact("command", c) for c in commands]
    text = render_ledger(facts)
    assert text.splitlines()[1:] == [
        f'- [commands] sqlite3 {db}: ".tables" · "SELECT title FROM books" (×2) · '
        '"SELECT state FROM books WHERE id = 4" (failed)',
        "- sqlite3 fixtures/test.sqlite .schema",
        # Sharing `add` saves less than a line of its own costs.
        "- [commands] git: add docs/a.md · status · add docs/b.md docs/c.md · add TODO.md",
    ]
    assert sorted(parse_ledger(text), key=facts.index) == facts
