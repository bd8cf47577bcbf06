"""`python -m bench.gate` drives answers through the real app and the fake server on every
path (`/compact`, a job, the tail template, the digest path): a good answer is used, bad
ones of several kinds are not, on each."""

from __future__ import annotations

import asyncio

import pytest

from bench.gate import PATHS, measure, render
from tests.gate_answers import dev_set

KINDS = ("good-markdown", "good-short", "other-session", "content-free", "injection-obeyed")


@pytest.mark.slow
def test_every_path_uses_the_good_answers_and_refuses_the_bad_ones() -> None:
    answers = [a for a in dev_set() if a.session == "injection" and a.kind in KINDS]
    verdicts = asyncio.run(measure(answers, PATHS))
    assert [(v.path, v.answer.kind, v.accepted) for v in verdicts] == [
        (path, a.kind, a.good) for path in PATHS for a in answers
    ]
    table = render(verdicts, "dev", "python -m bench.gate")
    assert "| compact | 0/3 (0%) | 0/2 (0%) |" in table
    assert "| digest | 0/3 (0%) | 0/2 (0%) |" in table
