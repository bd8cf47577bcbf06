"""`bench.large_archives` on a tiny size: bodies as the service accepts them, and a run
that prints one row per store."""

from __future__ import annotations

import itertools

import pytest

from bench.large_archives import SECTION, conversation, main
from tests.builders import user


def test_the_conversation_is_about_the_size_asked_and_its_roles_alternate() -> None:
    messages = conversation(0.5, 2)
    size = sum(len(str(m["content"])) for m in messages)
    assert 400_000 <= size <= 900_000
    roles = [m["role"] for m in messages[1:]]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert messages[-1] == user("Go on.")


@pytest.mark.slow
def test_a_tiny_run_prints_one_row_per_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--clients", "2", "--mb", "0.2", "--stores", "file"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(SECTION)
    assert "| file | 2 of 2 |" in printed
