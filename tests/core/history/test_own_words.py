from __future__ import annotations

import pytest

from app.core.history.own_words import _is_prose, request_fact


@pytest.mark.parametrize(
    "line",
    [
        "But the API key is in the env.",
        "also doesn't work",
        "- fix the retry loop first",
        '"Why" is the question, not how.',
        "What does this mean? Config API key: False",
    ],
)
def test_a_users_sentence_is_prose(line: str) -> None:
    assert _is_prose(line)


@pytest.mark.parametrize(
    "line",
    [
        "│ No search engines could be initialized from requested engines: pplx │",
        "[02/26/25 23:43:57] DEBUG Overriding num_results=5 with n=2 cli.py:309",
        "2026-11-25 10:00:01 ERROR pod api crashed",
        "    at Object.<anonymous> (src/cart.test.js:14:26)",
        'File "app/deploy.py", line 12, in main',
        "ValueError: memory limit must be a quantity",
        "INFO Search with engine brave returned two results",
        'twat-search web q "FontLab" -n 2 -e pplx --json --verbose',
        "ok fine",
    ],
)
def test_pasted_output_and_short_fragments_are_no_prose(line: str) -> None:
    assert not _is_prose(line)


def test_a_short_request_is_kept_whole_and_a_long_one_never_passes_the_limit() -> None:
    assert request_fact("Fix  the\nparser.", 300) == "Fix the parser."
    log = "\n".join(f"[10:00:{i:02d}] DEBUG step {i}" for i in range(100))
    kept = request_fact(f"Deploy fails:\n{log}\nWhy does step 7 hang forever?", 300)
    assert kept == "Deploy fails: … Why does step 7 hang forever? …"
    assert len(request_fact("x" * 5000, 300)) <= 300


def test_a_first_line_that_fits_keeps_its_long_tokens_as_typed() -> None:
    url = "https://ci.example.org/builds/2026/11/28/pipeline-7f3a9c1e/job-42/artifacts/log.txt"
    first = f"The nightly build broke again, see {url} please"
    log = "\n".join(f"[10:00:{i:02d}] step {i} " + "x" * 60 for i in range(40))
    kept = request_fact(f"{first}\n{log}\nWhy does https://{'a' * 60}.example fail?", 200)
    assert kept.startswith(f"{first} …")
    assert len(kept) <= 200


def test_a_first_line_too_long_alone_has_its_long_tokens_cut() -> None:
    url = "https://console.example.com/logs?query=" + "resource.type%3D%22k8s%22" * 20
    kept = request_fact(f"Look at {url} and tell me which pod logs the most errors", 300)
    assert kept == f"Look at {url[:39]}… and tell me which pod logs the most errors …"
