"""`/docs` and `/redoc` refer to no other host: their scripts and styles are served from the
installed package (tests/browser proves the pages render in Chromium offline)."""

from __future__ import annotations

import re

import httpx
import pytest

pytestmark = pytest.mark.anyio

ASSETS = ["swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_the_pages_load_only_local_assets(client: httpx.AsyncClient, page: str) -> None:
    html = (await client.get(page)).text
    assert re.findall(r"https?://", html) == []
    assert "fonts.googleapis" not in html
    for src in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert src.startswith("/docs/assets/"), src
        assert (await client.get(src)).status_code == 200, src


async def test_swagger_ui_uses_the_served_schema_and_no_validator(
    client: httpx.AsyncClient,
) -> None:
    html = (await client.get("/docs")).text
    assert "url: '/openapi.json'" in html
    assert '"validatorUrl": null' in html


@pytest.mark.parametrize("name", ASSETS)
async def test_every_asset_is_served(client: httpx.AsyncClient, name: str) -> None:
    response = await client.get(f"/docs/assets/{name}")
    assert response.status_code == 200
    assert len(response.content) > 1000


async def test_the_redoc_script_names_no_image_on_another_host(client: httpx.AsyncClient) -> None:
    """ReDoc's bundle builds its footer logo from a CDN address; the page's copy does not."""
    html = (await client.get("/redoc")).text
    [script] = re.findall(r'<script src="([^"]+)"', html)
    js = (await client.get(script)).text
    assert "redoc" in js.lower()
    assert re.findall(r'src:"https?://[^"]*"', js) == []
    assert "cdn.redoc.ly" not in js
