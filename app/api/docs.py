"""`/docs` (Swagger UI) and `/redoc` served from assets installed with the package.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so a sidecar without internet
showed blank pages. The scripts and styles come from the `fastapi-offline` distribution
(a maintained PyPI package of the Swagger UI and ReDoc bundles) and are served under
`/docs/assets/`; no page refers to another host (no CDN, no web fonts, no validator badge).
ReDoc's bundle itself names one: its footer logo, an image on `cdn.redoc.ly`. The page loads
a copy with that address replaced by an empty inline image (`redoc-offline.js`), so nothing
is fetched.

These pages and assets, and `/openapi.json`, stay open when `COMPACT_API_TOKEN` is set:
they describe the same schema that ships as `openapi.yaml`, nothing about this deployment,
and Swagger UI must read the schema before its Authorize button can take the token.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
OPENAPI_URL = "/openapi.json"
ASSETS_URL = "/docs/assets"
DOC_PATHS = frozenset({DOCS_URL, REDOC_URL, OPENAPI_URL})
REDOC_SCRIPT = "redoc-offline.js"
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"

# Swagger UI: keep the token across reloads, show request durations, and never ask the
# public validator (it would be a request to another host).
SWAGGER_PARAMETERS = {
    "persistAuthorization": True,
    "displayRequestDuration": True,
    "validatorUrl": None,
}


def assets_dir() -> Path:
    """The installed Swagger UI / ReDoc bundles (`swagger-ui-bundle.js`, `swagger-ui.css`,
    `redoc.standalone.js`, `favicon.png`)."""
    return Path(str(files("fastapi_offline") / "static"))


@cache
def offline_redoc() -> bytes:
    """ReDoc's bundle with its one outside address, the footer logo, made an inline image."""
    bundle = (assets_dir() / "redoc.standalone.js").read_text(encoding="utf-8")
    return bundle.replace(REDOC_LOGO, EMPTY_IMAGE).encode("utf-8")


def is_documentation(path: str) -> bool:
    """The pages, the schema and their assets: readable without the bearer token."""
    return path in DOC_PATHS or path.startswith(f"{ASSETS_URL}/")


def install_docs(app: FastAPI) -> None:
    """Adds the two pages and the assets; the app must be built with `docs_url=None` and
    `redoc_url=None` so FastAPI's CDN pages are not registered."""
    title = app.title

    @app.get(f"{ASSETS_URL}/{REDOC_SCRIPT}", include_in_schema=False)
    async def redoc_script() -> Response:
        return Response(offline_redoc(), media_type="text/javascript; charset=utf-8")

    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=OPENAPI_URL,
            title=f"{title} - Swagger UI",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=SWAGGER_PARAMETERS,
        )

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=OPENAPI_URL,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSETS_URL}/{REDOC_SCRIPT}",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
