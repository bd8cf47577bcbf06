"""Optional bearer authentication through the real ASGI stack."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.api.auth import BearerAuth
from tests.builders import user

pytestmark = pytest.mark.anyio

TOKEN = "tok-7f3a9c1e-secret"
COUNT = {"messages": [user("hello")]}
CHALLENGE = 'Bearer realm="context-compact"'
UNAUTHORIZED = {
    "error": "unauthorized",
    "message": "this server needs an `Authorization: Bearer <token>` header",
    "details": [],
}


@pytest.fixture
async def locked(client_for: Any) -> httpx.AsyncClient:
    client: httpx.AsyncClient = await client_for(api_token=TOKEN)
    return client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_without_a_configured_token_every_route_is_open(client: httpx.AsyncClient) -> None:
    assert (await client.post("/count", json=COUNT)).status_code == 200
    assert (await client.get("/openapi.json")).status_code == 200


async def test_the_right_token_is_let_through(locked: httpx.AsyncClient) -> None:
    response = await locked.post("/count", json=COUNT, headers=bearer(TOKEN))
    # "user\nhi": 3, the message's overhead 3, the reply's priming 3.
    assert (response.status_code, response.json()["token_count"]) == (200, 9)


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
async def test_the_scheme_name_is_case_insensitive(locked: httpx.AsyncClient, scheme: str) -> None:
    headers = {"authorization": f"{scheme} {TOKEN}"}
    assert (await locked.post("/count", json=COUNT, headers=headers)).status_code == 200


@pytest.mark.parametrize(
    "path", ["/count", "/should-compact", "/compact", "/compactions", "/archives/x"]
)
async def test_a_missing_token_is_401_with_a_challenge(
    locked: httpx.AsyncClient, path: str
) -> None:
    response = await locked.post(path, json=COUNT)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE
    assert response.json() == UNAUTHORIZED


@pytest.mark.parametrize(
    "header",
    [
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        "Bearer wrong",
        f"Basic {TOKEN}",
        f"Token {TOKEN}",
        TOKEN,
        "Bearer ",
        f"Bearer{TOKEN}",
        "Bearer \xe9t\xe9".encode("latin-1"),
    ],
)
async def test_a_wrong_token_or_scheme_is_401(
    locked: httpx.AsyncClient, header: str | bytes
) -> None:
    response = await locked.post("/count", json=COUNT, headers={"authorization": header})
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert response.headers["www-authenticate"].startswith(CHALLENGE)
    assert TOKEN not in response.text


async def test_a_presented_but_wrong_token_is_named_invalid_in_the_challenge(
    locked: httpx.AsyncClient,
) -> None:
    response = await locked.post("/count", json=COUNT, headers=bearer("wrong"))
    assert response.headers["www-authenticate"] == f'{CHALLENGE}, error="invalid_token"'


async def test_two_authorization_headers_are_refused(locked: httpx.AsyncClient) -> None:
    headers = [("authorization", "Bearer wrong"), ("authorization", f"Bearer {TOKEN}")]
    response = await locked.post("/count", json=COUNT, headers=headers)
    assert response.status_code == 401


@pytest.mark.parametrize("path", ["/compactions/x", "/archives/x", "/sessions/s/compactions"])
async def test_reads_are_protected(locked: httpx.AsyncClient, path: str) -> None:
    assert (await locked.get(path)).status_code == 401
    assert (await locked.get(path, headers=bearer(TOKEN))).status_code != 401


@pytest.mark.parametrize(
    "path", ["/docs", "/redoc", "/openapi.json", "/docs/assets/swagger-ui-bundle.js"]
)
async def test_the_documentation_is_open_so_the_token_can_be_entered_in_it(
    locked: httpx.AsyncClient, path: str
) -> None:
    # Swagger UI reads the schema before its Authorize button can take the token; the
    # schema is the published openapi.yaml, the same for every deployment.
    assert (await locked.get(path)).status_code == 200


@pytest.mark.parametrize("path", ["/docsx", "/docs/assetsx", "/docs/oauth2-redirect", "/redocs"])
async def test_only_the_documentation_itself_is_open(locked: httpx.AsyncClient, path: str) -> None:
    assert (await locked.get(path)).status_code == 401


async def test_probes_and_metrics_need_no_token(locked: httpx.AsyncClient) -> None:
    assert (await locked.get("/healthz")).status_code == 200
    assert (await locked.get("/readyz")).status_code == 200
    assert (await locked.get("/metrics")).status_code != 401


async def test_an_unauthenticated_body_is_never_read(locked: httpx.AsyncClient) -> None:
    reads: list[int] = []

    async def body() -> Any:
        reads.append(1)
        yield b"{}"

    response = await locked.post("/count", content=body())
    assert (response.status_code, reads) == (401, [])


async def test_the_schema_declares_the_optional_bearer_scheme(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "Required when the server sets COMPACT_API_TOKEN.",
    }
    assert spec["security"] == [{}, {"bearerAuth": []}]
    assert spec["paths"]["/healthz"]["get"]["security"] == []
    assert "security" not in spec["paths"]["/compact"]["post"]


def test_an_empty_token_is_a_configuration_error() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match="must not be empty"):
        BearerAuth(app, "")
