"""The app factory's start-up and shutdown."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import build_service, create_app
from app.settings import Settings

pytestmark = pytest.mark.anyio


async def test_the_start_up_heap_is_frozen_while_the_app_runs_and_thawed_after(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> None:
    settings = Settings(_env_file=None, workdir=str(tmp_path), data_dir=str(tmp_path / "data"))  # type: ignore[call-arg]
    app = create_app(settings, service=build_service(settings, tokenizer))
    async with LifespanManager(app):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
