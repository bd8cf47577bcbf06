"""A session whose summary can tell an edit the wrong way round: Cursor-like, OpenAI
shape (`read_file`, `search_replace`, `run_terminal_cmd`): search results with an empty
title or snippet crash a scraper, and the agent takes `title` and `snippet` out of the
non-empty validator. The wrong answer says the edit made them required (`edit-reversed`);
the good ones say it the right way, in full and terse."""

from __future__ import annotations

from typing import Any

from tests.gate_answers import TITLES, Answer, Bodies, archived, markdown
from tests.gate_claim_sessions import EMPTY_SHEET, oa_call, oa_result, oa_text
from tests.gate_claims import FILES, GOALS, STATUS, Change, changed
from tests.gate_sessions import Session

MODELS = (
    "from pydantic import BaseModel, field_validator\n\n\nclass SearchResult(BaseModel):\n"
    "    title: str\n    snippet: str\n    source: str\n\n"
    '    @field_validator("title", "snippet", "source")\n'
    "    def not_empty(cls, v):\n        if not v:\n"
    '            raise ValueError("must not be empty")\n        return v\n'
)
CRASH = (
    'Traceback (most recent call last):\n  File "src/scraper.py", line 41, in parse\n'
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for SearchResult\n"
    "snippet\n  Value error, must not be empty\nexit code 1"
)
SCRAPER_RAW: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a powerful agentic AI coding assistant in Cursor."},
    {
        "role": "user",
        "content": "<user_query>Results with an empty title or snippet crash the scraper. "
        "Let them through with empty strings; only the source must stay non-empty."
        "</user_query>",
    },
    oa_call("Reading the model.", "s1", "read_file", target_file="src/models.py"),
    oa_result("s1", MODELS),
    oa_call("Reproducing.", "s2", "run_terminal_cmd", command="python src/scraper.py --query cats"),
    oa_result("s2", CRASH),
    oa_call(
        "Keeping the check for source only.",
        "s3",
        "search_replace",
        file_path="src/models.py",
        old_string='    @field_validator("title", "snippet", "source")',
        new_string='    @field_validator("source")',
    ),
    oa_result("s3", "The file src/models.py has been updated."),
    oa_call(
        "Running again.", "s4", "run_terminal_cmd", command="python src/scraper.py --query cats"
    ),
    oa_result("s4", "Saved 20 results to results.json\nexit code 0"),
    oa_text("The scraper saves all 20 results; empty titles and snippets pass through."),
]

GOOD: list[list[str]] = [
    ["Let search results with an empty title or snippet through; keep `source` non-empty."],
    [
        "`src/models.py`: read; `title` and `snippet` taken out of the not_empty validator, "
        "which now checks only `source`."
    ],
    [
        "`python src/scraper.py --query cats`: ValidationError for SearchResult (exit code "
        "1), then saved 20 results after the edit."
    ],
    ["Done: empty titles and snippets no longer crash the scraper."],
    ["ValidationError: 1 validation error for SearchResult (snippet must not be empty)."],
]
TERSE = [
    "Allow empty title and snippet in SearchResult.",
    "`src/models.py`: validator on `source` only.",
    "`python src/scraper.py --query cats`: 20 results saved.",
    "Done.",
    "ValidationError fixed.",
]
REVERSED = Change(
    "edit-reversed",
    FILES,
    "src/models.py",
    "Changed `src/models.py` to require non-empty strings for `title`, `snippet` and `source`.",
)


def sessions() -> list[Session]:
    return [Session("scraper", SCRAPER_RAW, EMPTY_SHEET)]


def _answer(kind: str, body: Bodies, false: str = "") -> Answer:
    digest = (" ".join(body[TITLES[GOALS]]), " ".join(body[TITLES[STATUS]]))
    if false:
        digest = (digest[0], f"{digest[1]} {false}")
    return Answer("scraper", kind, not false, markdown(body), archived(body), digest, "stop", false)


def edits_set() -> list[Answer]:
    body = {t: list(lines) for t, lines in zip(TITLES, GOOD, strict=True)}
    terse = {t: [line] for t, line in zip(TITLES, TERSE, strict=True)}
    return [
        _answer("good-claims", body),
        _answer("good-terse", terse),
        _answer(REVERSED.kind, changed(body, REVERSED), REVERSED.new),
    ]
