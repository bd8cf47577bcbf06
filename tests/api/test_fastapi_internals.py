"""What `FastJsonRoute` and `FastJsonRequest` (app/api/routing.py) rely on in FastAPI beyond
its documented API, each pinned here so that an upgrade that changes it fails a test that
says what breaks, instead of a request that quietly takes another path.

The request-level tests go through `include_router`, as `create_app` does: FastAPI builds
the handler of an included route from the route's own `get_route_handler()`.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, get_type_hints

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel

import app.api.routes
from app.api.routing import FastJsonRoute, is_json_content

pytestmark = pytest.mark.anyio

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class Body(BaseModel):
    text: str
    n: int = 0


async def _with_body(body: Body) -> dict[str, Any]:
    return body.model_dump()


async def _without_body() -> dict[str, Any]:
    return {}


def _our_body_routes() -> Iterator[FastJsonRoute]:
    for module in pkgutil.iter_modules(app.api.routes.__path__):
        router = importlib.import_module(f"{app.api.routes.__name__}.{module.name}").router
        for route in router.routes:
            if isinstance(route, FastJsonRoute) and route.body_field is not None:
                yield route


def test_the_body_field_is_a_model_field_from_fastapi_compat() -> None:
    try:
        from fastapi._compat import ModelField
    except ImportError:
        pytest.fail(
            "fastapi._compat.ModelField is gone: routing.py imports it to type the body "
            "field it validates with"
        )
    route = APIRoute("/x", _with_body, methods=["POST"])
    assert isinstance(route.body_field, ModelField), (
        "APIRoute.body_field is no longer a ModelField: FastJsonRoute validates the body "
        "model with it on parsing"
    )
    assert APIRoute("/x", _without_body, methods=["POST"]).body_field is None, (
        "a route without a body no longer has body_field None: FastJsonRoute would answer "
        "415 to a request that sends no body"
    )


def test_validate_gives_the_model_and_no_errors_or_errors_for_bad_input() -> None:
    field = APIRoute("/x", _with_body, methods=["POST"]).body_field
    assert field is not None
    value, errors = field.validate({"text": "hi"}, {}, loc=("body",))
    assert (value, errors) == (Body(text="hi"), []), (
        "ModelField.validate(document, {}, loc=...) no longer returns (model, []) for a "
        "valid document: FastJsonRequest would not hand FastAPI the validated model"
    )
    value, errors = field.validate({"n": "x"}, {}, loc=("body",))
    assert isinstance(errors, list), "ModelField.validate no longer returns errors as a list"
    assert [error["loc"] for error in errors] == [("body", "text"), ("body", "n")], (
        "ModelField.validate no longer reports bad input as a non-empty list of errors: "
        "FastJsonRequest would hand FastAPI an invalid body as if it were the model"
    )


BODY_ROUTES = list(_our_body_routes())


def test_our_body_routes_are_found() -> None:
    paths = {route.path for route in BODY_ROUTES}
    assert {"/count", "/compact", "/compactions", "/sessions/{session_id}/recall"} <= paths


@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda route: route.path)
def test_each_of_our_body_models_validates_an_instance_as_itself(route: FastJsonRoute) -> None:
    assert route.body_field is not None
    model = get_type_hints(route.endpoint)["body"]
    instance = model.model_construct()
    value, errors = route.body_field.validate(instance, {}, loc=("body",))
    assert errors == []
    assert value is instance, (
        f"{model.__name__} is re-validated (or copied) when FastAPI is handed an instance: "
        "FastJsonRequest gives FastAPI the model it already validated, which would now be "
        "validated twice"
    )


class _Recorder:
    """A route class and a request class that note what FastAPI's handler calls on the
    request it is given; `json()` hands back `document` when one is set."""

    def __init__(self, document: Any = None) -> None:
        self.calls: list[str] = []
        self.built_with_body_field: list[bool] = []
        self.document = document
        self.app = FastAPI()
        recorder = self

        class RecordingRequest(Request):
            async def body(self) -> bytes:
                recorder.calls.append("body")
                return await super().body()

            async def json(self) -> Any:
                recorder.calls.append("json")
                if isinstance(recorder.document, Exception):
                    raise recorder.document
                if recorder.document is not None:
                    return recorder.document
                return json.loads(await Request.body(self))  # not noted as a body() call

        class RecordingRoute(APIRoute):
            def get_route_handler(self) -> Handler:
                handler = super().get_route_handler()
                recorder.built_with_body_field.append(self.body_field is not None)

                async def recording(request: Request) -> Response:
                    recorder.calls.append("handler")
                    return await handler(RecordingRequest(request.scope, request.receive))

                return recording

        router = APIRouter(route_class=RecordingRoute)

        @router.post("/echo")
        async def echo(body: Body) -> dict[str, Any]:
            return {"same": body is recorder.document, "fields_set": sorted(body.model_fields_set)}

        self.app.include_router(router)

    async def post(self, content: bytes, content_type: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            headers = {"content-type": content_type}
            return await client.post("/echo", content=content, headers=headers)


async def test_the_handler_serving_an_included_route_is_built_by_get_route_handler() -> None:
    recorder = _Recorder()
    response = await recorder.post(b'{"text": "hi"}', "application/json")
    assert response.status_code == 200
    assert recorder.calls[:1] == ["handler"], (
        "the handler serving an included route is no longer the one get_route_handler() "
        "returns: FastJsonRoute's 415, limits and early validation would be skipped"
    )
    assert recorder.built_with_body_field
    assert all(recorder.built_with_body_field), (
        "get_route_handler() is called before body_field is set: FastJsonRoute would "
        "build a handler that neither validates the body nor answers 415"
    )


@pytest.mark.parametrize(
    ("content_type", "content", "calls"),
    [
        ("application/json", b'{"text": "hi"}', ["handler", "body", "json"]),
        ("application/json; charset=utf-8", b'{"text": "hi"}', ["handler", "body", "json"]),
        ("APPLICATION/JSON", b'{"text": "hi"}', ["handler", "body", "json"]),
        ("application/vnd.agent+json", b'{"text": "hi"}', ["handler", "body", "json"]),
        ("application/json", b"", ["handler", "body"]),
        ("text/plain", b'{"text": "hi"}', ["handler", "body"]),
        ("application/jsonx", b'{"text": "hi"}', ["handler", "body"]),
        ("application/x-www-form-urlencoded", b"text=hi", ["handler", "body"]),
    ],
)
async def test_fastapi_reads_the_body_then_calls_json_only_for_a_json_type(
    content_type: str, content: bytes, calls: list[str]
) -> None:
    recorder = _Recorder()
    await recorder.post(content, content_type)
    assert recorder.calls == calls, (
        "FastAPI's handler no longer reads request.body() first and then calls "
        "request.json() only when the body is non-empty and the type is JSON: "
        "FastJsonRequest answers body() with a one-byte stand-in and gives the document "
        "from json() only"
    )
    if content:  # FastAPI looks at the type only when there is a body
        headers = [(b"content-type", content_type.encode())]
        declared_json = is_json_content(Request({"type": "http", "headers": headers}))
        assert declared_json == ("json" in calls), (
            "is_json_content no longer matches FastAPI's own test for calling json(): "
            "FastJsonRoute would refuse with 415 a body FastAPI reads as JSON, or hand "
            "FastAPI a stand-in body it reads as bytes"
        )


async def test_a_model_instance_from_json_reaches_the_endpoint_as_itself() -> None:
    validated = Body(text="hi")
    recorder = _Recorder(document=validated)
    response = await recorder.post(b"\x00", "application/json")
    assert response.json() == {"same": True, "fields_set": ["text"]}, (
        "a model instance handed back from request.json() no longer reaches the endpoint "
        "as that very object: FastJsonRequest's early validation would be lost or redone"
    )


async def test_a_json_decode_error_from_json_is_fastapis_422_at_its_position() -> None:
    recorder = _Recorder(document=json.JSONDecodeError("Expecting value", '{"text": ', 9))
    response = await recorder.post(b'{"text": ', "application/json")
    assert response.status_code == 422
    assert [(e["type"], e["loc"]) for e in response.json()["detail"]] == [
        ("json_invalid", ["body", 9])
    ], (
        "FastAPI no longer answers a JSONDecodeError from request.json() with a 422 "
        "json_invalid at the error's position: FastJsonRequest leaves malformed JSON for "
        "FastAPI to report"
    )
