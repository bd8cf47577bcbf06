"""The probe recalls every fact an archive holds, not only those the context lost."""

from __future__ import annotations

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from bench.recall_probe import probe
from bench.replay import in_process
from bench.replay_driver import Conversation
from tests.bench.test_replay import long_session

pytestmark = pytest.mark.anyio


async def test_every_archived_command_of_a_compacted_session_is_recalled() -> None:
    async with in_process(TiktokenTokenizer()) as service:
        conversation = Conversation("built", "anthropic", long_session(12))
        probed, misses = await probe(service, conversation, "full", 3000)
    assert probed > 0
    assert misses == []
