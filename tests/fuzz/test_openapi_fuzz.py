"""Schema fuzzing: schemathesis generates requests from `openapi.yaml` — valid ones and
deliberately invalid ones — and sends them to the app in-process (the real ASGI stack,
lifespan included). Every answer must be no server error, use a status code the schema
documents for that route, and match the schema documented for that status.

`openapi.yaml` is what clients read; CI checks it equals `app.openapi()` before this step
runs. Not part of the default test run (marker `fuzz`): `.ci/run` runs it as its own step,
`.venv/bin/python -m pytest -m fuzz` alone. Deterministic (`derandomize`, no example
database) and bounded by `MAX_EXAMPLES` per operation.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

pytestmark = pytest.mark.fuzz

# 100 per operation keeps the CI step near a minute; `FUZZ_EXAMPLES=300` for a deeper look.
MAX_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "100"))
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]

schema = schemathesis.openapi.from_path(Path(__file__).resolve().parents[2] / "openapi.yaml")
schema.config.output.sanitization.update(enabled=False)  # readable reproductions


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, tokenizer: TiktokenTokenizer) -> FastAPI:
    """The service with its embedded defaults (extractive summarizer) in temp dirs."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "work").mkdir()
    config = Settings(
        _env_file=None,  # type: ignore[call-arg]
        workdir=str(root / "work"),
        data_dir=str(root / "data"),
        summarizer="extractive",
    )
    return create_app(config, service=build_service(config, tokenizer))


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_answer_is_documented_and_no_server_error(
    case: schemathesis.Case, app: FastAPI
) -> None:
    case.call_and_validate(app=app, checks=CHECKS)
