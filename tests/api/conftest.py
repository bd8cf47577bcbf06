from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

AppFactory = Callable[..., Any]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def settings_for(tmp_path: Path, workdir: Path) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "workdir": str(workdir),
            "data_dir": str(tmp_path / "data"),
            "summarizer": "extractive",
            # The tests of LLM failures look at the failure itself, which the extractive
            # fallback (the default) would hide; the tests of the fallback ask for it.
            "summary_fallback": "none",
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)  # type: ignore[call-arg]

    return make


@pytest.fixture
async def client_for(
    settings_for: Callable[..., Settings], tokenizer: TiktokenTokenizer
) -> AsyncIterator[Callable[..., Any]]:
    """Builds an in-process client over the real ASGI stack, with lifespan; a summarizer
    given positionally replaces the service's (keywords are settings: `summarizer="openai"`)."""
    managers: list[LifespanManager] = []
    clients: list[httpx.AsyncClient] = []

    async def make(summarizer: Any = None, /, **overrides: Any) -> httpx.AsyncClient:
        settings = settings_for(**overrides)
        service = build_service(settings, tokenizer)
        if summarizer is not None:
            service.summarizer = summarizer
        manager = LifespanManager(create_app(settings, service=service))
        await manager.__aenter__()
        managers.append(manager)
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://compact.test"
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for manager in managers:
        await manager.__aexit__(None, None, None)


@pytest.fixture
async def client(client_for: Callable[..., Any]) -> httpx.AsyncClient:
    result: httpx.AsyncClient = await client_for()
    return result


@pytest.fixture
def client_with(client_for: Callable[..., Any]) -> Callable[..., Any]:
    """`client_for` under the name the summarizer-swapping tests use."""
    return client_for
