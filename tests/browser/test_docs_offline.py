"""`/docs` and `/redoc` in a real headless Chromium with the network cut off.

Runs as its own CI step (`python -m pytest -m browser`; the plain run leaves it out). The
browser is Debian's `chromium` (`CHROMIUM` names another binary), driven by Playwright.
Every request the pages make that is not to the test server on 127.0.0.1 is aborted and
recorded, and host names resolve to nothing, so a page that still needed a CDN would stay
blank and fail here. The server runs with `COMPACT_API_TOKEN` set: the token is entered
through Swagger UI's Authorize dialog, and a "Try it out" of `/count` must answer 200.

Without a browser the tests skip, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from app.main import create_app
from app.settings import Settings
from tests.live_server import serve_in_thread

pytestmark = pytest.mark.browser

TOKEN = "browser-test-token"
TIMEOUT_MS = 30_000
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Every host name resolves to nothing; 127.0.0.1 is an address, never resolved.
CUT_OFF = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
COUNT_BODY = {"messages": [{"role": "user", "content": "How many tokens is this?"}]}


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)"
    return None


@dataclass
class Browser:
    page: Any
    base: str
    refused: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser tests: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    tmp = tmp_path_factory.mktemp("browser")
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, api_token=TOKEN, workdir=str(tmp), data_dir=str(tmp / "data")
    )
    with serve_in_thread(create_app(settings)) as base, sync_playwright() as driver:
        chromium = driver.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[CUT_OFF, "--no-sandbox"]
        )
        context = chromium.new_context()
        state = Browser(page=context.new_page(), base=base)
        server = urlsplit(base).netloc

        def only_the_server(route: Any) -> None:
            if urlsplit(route.request.url).netloc == server:
                route.continue_()
            else:
                state.refused.append(route.request.url)
                route.abort("internetdisconnected")

        context.route("**/*", only_the_server)
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield state
        finally:
            context.close()
            chromium.close()


def spec_paths(base: str) -> set[str]:
    paths: dict[str, Any] = httpx.get(f"{base}/openapi.json", timeout=10).json()["paths"]
    return set(paths)


def test_swagger_ui_lists_every_operation_offline(browser: Browser) -> None:
    page = browser.page
    browser.refused.clear()
    page.goto(f"{browser.base}/docs")
    page.wait_for_selector(".opblock-summary-path")
    shown = set(
        page.locator(".opblock-summary-path").evaluate_all(
            "nodes => nodes.map(n => n.getAttribute('data-path'))"
        )
    )
    assert shown == spec_paths(browser.base)
    assert browser.refused == []


def test_try_it_out_of_count_works_with_the_token_entered_in_authorize(browser: Browser) -> None:
    page = browser.page
    browser.refused.clear()
    page.goto(f"{browser.base}/docs")
    page.click("button.authorize")
    dialog = page.locator(".modal-ux")
    dialog.locator("input").first.fill(TOKEN)
    dialog.locator("button.modal-btn.auth.authorize").click()
    dialog.locator("button.btn-done").click()

    operation = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/count"])')
    operation.locator(".opblock-summary").click()
    operation.locator("button.try-out__btn").click()
    operation.locator("textarea.body-param__text").fill(json.dumps(COUNT_BODY))
    operation.locator("button.execute").click()
    answer = operation.locator(".live-responses-table tbody tr.response").first
    answer.wait_for()
    assert answer.locator(".response-col_status").inner_text().strip() == "200"
    body = json.loads(answer.locator(".response-col_description pre.microlight").first.inner_text())
    assert body["token_count"] > 0
    assert body["message_count"] == 1
    assert f"Authorization: Bearer {TOKEN}" in operation.locator(".curl-command").inner_text()
    assert browser.refused == []


def test_redoc_renders_offline(browser: Browser) -> None:
    page = browser.page
    browser.refused.clear()
    page.goto(f"{browser.base}/redoc")
    page.locator("h1", has_text="Context Compact").wait_for()
    page.locator("h2", has_text="Count the tokens of a message list").wait_for()
    # ReDoc's bundle names one outside address, its footer logo: the page's copy does not.
    assert browser.refused == []
