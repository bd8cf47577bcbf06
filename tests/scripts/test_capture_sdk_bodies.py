"""The bodies of tests/data/sdk_bodies are what the installed SDKs send today."""

from __future__ import annotations

import pytest

from scripts import capture_sdk_bodies


@pytest.mark.slow
def test_the_stored_bodies_are_what_the_sdks_send(capsys: pytest.CaptureFixture[str]) -> None:
    assert capture_sdk_bodies.main(["--check"]) == 0, capsys.readouterr().out


def test_each_body_names_the_sdk_call_that_sent_it() -> None:
    from tests.sdk_bodies import NAMES, _record

    assert len(NAMES) == 10
    for name in NAMES:
        record = _record(name)
        assert record["sdk"].split()[0] in ("anthropic", "openai")
        assert record["path"] in ("/v1/messages", "/v1/chat/completions", "/v1/responses")
