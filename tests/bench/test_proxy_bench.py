"""`python -m bench.proxy` runs end to end on a tiny scale: the timings against the fake
provider and the server in processes of their own, fidelity, and one short session
replayed through the proxy (never a timed assert: the numbers are the bench's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench import proxy

pytestmark = pytest.mark.slow

SESSION = {
    "format": "anthropic",
    "source": "made here",
    "license": "MIT",
    "messages": [
        {"role": "user", "content": "Fix the parser."},
        *[
            m
            for i in range(12)
            for m in (
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"t{i}",
                            "name": "bash",
                            "input": {"command": f"pytest tests/test_{i}.py"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"t{i}",
                            "content": f"FAILED tests/test_{i}.py::test_x - KeyError: 'k{i}'\n"
                            * 40,
                        },
                    ],
                },
            )
        ],
        {"role": "assistant", "content": "Done."},
    ],
}


def test_the_proxy_bench_runs_and_reports_every_measure(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tiny.anthropic.json").write_text(json.dumps(SESSION), encoding="utf-8")
    args = proxy.parse_args(
        [
            "--pairs",
            "3",
            "--stream-runs",
            "2",
            "--corpus",
            str(corpus),
            "--windows",
            "6000",
            "--time-scale",
            "0.001",
        ]
    )
    report = asyncio.run(proxy.measure(args, tmp_path / "data"))
    assert [row["pairs"] for row in report["first_byte"]] == [3, 3]
    assert report["stream"]["runs"] == 2
    assert report["fidelity"]["identical"] == report["fidelity"]["cases"]
    total = report["replay"]["total"]
    assert total["requests"] == 13
    assert total["overflows"] == 0
    assert sum(total["compactions"].values()) >= 1
    text = proxy.render(report, args, "python -m bench.proxy")
    assert "| context-length errors reaching the agent | 0 " in text
    made = sum(total["compactions"].values())
    assert report["replay"]["by_window"]["6000"]["compactions"] == total["compactions"]
    assert 0 <= total["quick"] <= total["compactions"].get("applied", 0)
    assert f"| 6000 | {made} | " in text
    # What the first request after a compaction resent (all but the turn just added) was
    # read from the cache at least as much as the whole request was.
    assert 0 <= total["cache_after"] <= total["cache_after_resent"] <= 1
