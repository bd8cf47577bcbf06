"""What the settings are read with: comma-separated lists, and which servers are local."""

from __future__ import annotations

import pytest

from app.settings.sources import is_loopback, split_commas


def test_a_list_given_as_text_is_its_comma_separated_parts_without_blanks() -> None:
    assert split_commas(" Read, Bash ,,read_file ") == ["Read", "Bash", "read_file"]
    assert split_commas("") == []
    assert split_commas(["a, b"]) == ["a, b"]


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("10.0.0.1", False),
        ("ollama.internal", False),
        ("", False),
    ],
)
def test_a_server_is_local_on_a_loopback_address_or_localhost(host: str, local: bool) -> None:
    assert is_loopback(host) is local
