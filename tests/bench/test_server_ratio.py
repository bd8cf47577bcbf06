"""`python -m bench.server_ratio` against respx: the counts it asks for, the table it writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.summary.server_ratio import ratio_sample
from bench.server_ratio import HEADING, main
from tests.builders import assistant, tool_result, tool_use, user

COUNT = TiktokenTokenizer().count


@pytest.fixture
def server() -> Iterator[respx.MockRouter]:
    """llama.cpp's `/tokenize`: 1.1 tokens per cl100k token for the sample, 1.3 for the rest."""

    def tokenize(request: httpx.Request) -> httpx.Response:
        text = json.loads(request.content)["content"]
        share = 1.1 if text == ratio_sample() else 1.3
        return httpx.Response(200, json={"tokens": [0] * round(share * COUNT(text))})

    with respx.mock(assert_all_called=False) as router:
        router.post("http://llm.test/tokenize").mock(side_effect=tokenize)
        yield router


def test_a_transcript_above_the_fitted_ratio_is_reported_not_covered(
    server: respx.MockRouter, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    call = tool_use("bash", "t1", command="pytest -q")
    messages = [user("Fix the tests."), assistant("Running.", call), tool_result("t1", "1 failed")]
    (corpus / "one.anthropic.json").write_text(json.dumps({"messages": messages}))
    results = tmp_path / "RESULTS.md"
    argv = ["--base-url", "http://llm.test/v1", "--corpus", str(corpus), "--results", str(results)]
    assert main([*argv, "--write"]) == 0
    text = results.read_text()
    assert text.startswith(f"# Benchmark results\n\n{HEADING}\n")
    assert "| ratio sample | 608 | 669 | 1.1003 |" in text
    assert "- the ratio the service fits with: 1.1003 × 1.08 = 1.1884" in text
    assert "(highest: one); **not covered**: a chunk of it takes 9.3% more than fitted" in text
