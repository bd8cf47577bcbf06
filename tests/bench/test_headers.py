"""Smoke test of the header-abuse benchmark: a two-second run against `python -m app serve`
proves the blasters get 431, the drip and idle connections are closed by the server and
every /healthz probe answers. No timing is asserted; the figures live in bench/RESULTS.md."""

from __future__ import annotations

import pytest

from bench.headers import SECTION, report, run


@pytest.mark.slow
def test_a_two_second_run_gets_431s_closes_dripping_and_idle_connections() -> None:
    load, found = run((2.0, 2, 2, 4, 0.1, 4), baseline=False, header_timeout=0.5)
    assert found["failed"] == 0
    assert found["latencies"]
    assert None not in found["refusals"]
    # Every blaster is refused: 431 once its head passes the limit; on a loaded machine a
    # blaster whose head has not reached the limit within the 0.5 s header timeout gets the
    # 408 of a head too slow instead (both are the defined refusals, never an answer).
    statuses = {status for status, _ in found["answers"]}
    assert "HTTP/1.1 431 Request Header Fields Too Large" in statuses
    assert statuses <= {
        "HTTP/1.1 431 Request Header Fields Too Large",
        "HTTP/1.1 408 Request Timeout",
    }
    assert found["drip_lives"]
    assert found["idle_lives"]
    text = report(load, found, baseline=False, command="python -m bench.headers")
    assert text.startswith(SECTION + "\n")
    assert "| /healthz probes answered / failed |" in text
