"""The real aider through the proxy, against the tests' fake provider with a small window:
`python -m bench.aider_cli` (`--aider PATH` to reuse an aider; else `pip install
aider-chat` into a temporary venv of its own, never into the project's).

aider runs as one chat of several turns: its requests come from standard input, one line
each (`--no-fancy-input` reads them plainly, and the chat ends at the end of the input),
with `app.py` added to the chat and a conventions file read-only (`--read`), the whole-file
edit format, `--model openai/MODEL --openai-api-base` the proxy's `/v1` as docs/proxy.md
says and `--max-chat-history-tokens` raised so that aider leaves its history to the proxy.
Each turn the fake model rewrites `app.py` whole (a new version per turn, which aider
applies): the history grows past the window, and aider's files message must carry the
file's current contents every time. The same chat runs direct for comparison, and through
the proxy once more with a model aider's settings name (`gpt-4o`: its edit-format reminder
is a system message of its own, not appended to the user's request). Between
aider and what it talks to sits a recording relay (`bench.cli_relay`). Printed per run:
the requests, the provider's refusals for length, the errors aider saw, the proxy's
actions (its `/metrics`) and session ids (its `x-compact-session`), in how many requests
the files message with the latest version of `app.py` reached the provider (and the
conventions), how many turns aider applied, its exit code. `--write` replaces this
benchmark's section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.cli_relay import proxy_actions, relay, results_table
from bench.results import write_section
from tests.fakes.provider import FakeProvider, Limits, Received, Text, answer
from tests.proxy.live import serve_proxy

PACKAGE = "aider-chat"
MODEL = "gpt-compact-bench"  # a model aider's settings do not name
NAMED = "gpt-4o"  # one they do: its reminder a system message of its own
WINDOW = 6_000
TURNS = 20
LINES = 40  # of app.py: about 600 tokens, the whole file in every answer
HISTORY_TOKENS = 1_000_000  # aider's `--max-chat-history-tokens`: its own summaries off
CONVENTION = "Name every function step_NN_MM and return an int."
FILES_PREFIX = "I have *added these files to the chat*"
STEP = re.compile(r"Step (\d+):")
HEADING = "## Proxy: the real aider, one chat with its files message (bench.aider_cli)"


def version(k: int) -> str:
    """`app.py` after turn `k` (0: as the chat starts)."""
    return "".join(
        f"def step_{k:02d}_{i:02d}():\n    return {k * 1000 + i}\n" for i in range(LINES)
    )


def turns(count: int = TURNS) -> str:
    """aider's standard input: one request a line."""
    return "".join(f"Step {k}: rewrite app.py for step {k}.\n" for k in range(1, count + 1))


def _install(into: Path) -> Path:
    subprocess.run(["python3", "-m", "venv", str(into)], check=True, capture_output=True)
    subprocess.run(
        [str(into / "bin" / "pip"), "install", "-q", PACKAGE], check=True, capture_output=True
    )
    return into / "bin" / "aider"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _messages(body: Any) -> list[dict[str, Any]]:
    found = body.get("messages") if isinstance(body, dict) else None
    return [m for m in found or [] if isinstance(m, dict)]


def step(body: Any) -> int | None:
    """The turn a request answers: the step its latest user message asks for."""
    for message in reversed(_messages(body)):
        if message.get("role") == "user":
            found = STEP.findall(_text(message.get("content")))
            if found:
                return int(found[-1])
    return None


def files_message_holds(body: Any, expected: str) -> bool:
    """Whether the request has aider's files message with `expected` in it."""
    return any(
        m.get("role") == "user"
        and _text(m.get("content")).startswith(FILES_PREFIX)
        and expected in _text(m.get("content"))
        for m in _messages(body)
    )


def latest_files(requests: Sequence[tuple[Any, int]]) -> list[bool | None]:
    """Per request (its body and the provider's status), in order: whether its files
    message held `app.py` as the latest answered turn left it (the version that turn's
    answer wrote; the first version before any); None for a request that answers no step."""
    checks: list[bool | None] = []
    answered = 0
    for body, status in requests:
        k = step(body)
        checks.append(None if k is None else files_message_holds(body, version(answered)))
        if k is not None and status == 200:
            answered = k
    return checks


def session_runs(answered: Sequence[dict[str, str]]) -> str:
    """The session each answer named, as runs: `#1 x1, #2 x19` (the ids in order of
    first sight); empty when none named one."""
    ids = sessions(answered)
    runs: list[list[int]] = []
    for headers in answered:
        session = headers.get("session")
        if not session:
            continue
        n = ids.index(session) + 1
        if runs and runs[-1][0] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    return ", ".join(f"#{n} x{count}" for n, count in runs)


def rewrite(received: Received) -> Any:
    """The fake model: `app.py` whole, as the turn asked for; anything else (aider's own
    summary, were it asked for one) a short text."""
    k = step(received.json)
    if k is None:
        return answer(Text("The user asked for app.py to be rewritten step by step."))
    return answer(Text(f"app.py\n```python\n{version(k)}```\n"))


def sessions(answered: Sequence[dict[str, str]]) -> list[str]:
    """The proxy's session ids in the order they first came, from the answers' headers."""
    seen: list[str] = []
    for headers in answered:
        session = headers.get("session")
        if session and session not in seen:
            seen.append(session)
    return seen


def command(aider: Path, base: str, model: str = MODEL) -> list[str]:
    """aider as the bench runs it (docs/proxy.md's line, and what one chat needs)."""
    return [
        str(aider),
        "--model",
        f"openai/{model}",
        "--openai-api-base",
        base,
        "--max-chat-history-tokens",
        str(HISTORY_TOKENS),
        "--no-git",
        "--yes-always",
        "--no-fancy-input",
        "--no-pretty",
        "--no-check-update",
        "--analytics-disable",
        "--no-show-model-warnings",
        "--edit-format",
        "whole",
        "--read",
        "CONVENTIONS.md",
        "app.py",
    ]


def run(aider: Path, root: Path, how: str, model: str = MODEL) -> dict[str, Any]:
    """One chat, `direct` or through the `proxy`, with `model`."""
    work = root / f"{how}-{model}" / "work"
    work.mkdir(parents=True)
    home = work.parent / "home"
    home.mkdir()
    (work / "app.py").write_text(version(0))
    (work / "CONVENTIONS.md").write_text(f"# Conventions\n\n{CONVENTION}\n")
    with FakeProvider(Limits(windows={model: WINDOW}), validate=True) as provider:
        provider.respond_with(rewrite)
        models = {model: {"context_window": WINDOW, "tokenizer": "o200k"}}
        with serve_proxy(provider.url, work.parent, models=models) as live:
            upstream = live.proxy if how == "proxy" else provider.url
            with relay(upstream) as seen:
                env = {
                    **os.environ,
                    "HOME": str(home),
                    "OPENAI_API_KEY": "sk-bench",
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                }
                done = subprocess.run(
                    command(aider, seen.url + "/v1", model),
                    cwd=work,
                    env=env,
                    input=turns(),
                    capture_output=True,
                    text=True,
                    timeout=1200,
                )
            answers = [a for a in seen.answers if a.method == "POST"]
            actions = proxy_actions(live.api) if how == "proxy" else {}
    posts = [e for e in provider.exchanges if e.received.method == "POST"]
    chat = [e for e in posts if e.received.path == "/v1/chat/completions"]
    checks = latest_files([(e.received.json, e.sent.status) for e in chat])
    asked = [c for c in checks if c is not None]
    ids = sessions([a.compact for a in answers])
    rule = CONVENTION.encode()
    applied = done.stdout.count("Applied edit to app.py")
    return {
        "run": f"{how}, {model}",
        "requests": len(chat),
        "refused_for_length": sum(
            e.sent.status == 400 and b"context_length_exceeded" in e.sent.body for e in chat
        ),
        "other_provider_errors": sum(
            e.sent.status != 200 and b"context_length_exceeded" not in e.sent.body for e in posts
        ),
        "errors_seen_by_agent": sum(a.error for a in answers),
        "actions": actions,
        "sessions": len(ids) if how == "proxy" else None,
        "session_runs": session_runs([a.compact for a in answers]) or None,
        "latest_files_message": f"{sum(asked)} of {len(asked)}",
        "conventions": f"{sum(rule in e.received.body for e in chat)} of {len(chat)}",
        "turns_applied": f"{applied} of {TURNS}",
        "file_at_end_is_last_turn": (work / "app.py").read_text() == version(TURNS),
        "exit": done.returncode,
    }


ROWS = (
    ("requests that reached the provider (`POST /v1/chat/completions`)", "requests"),
    ("refused by the provider for their length", "refused_for_length"),
    ("other errors from the provider", "other_provider_errors"),
    ("errors seen by aider", "errors_seen_by_agent"),
    ("the proxy's actions", "actions"),
    ("the proxy's sessions (`x-compact-session` ids)", "sessions"),
    ("the session of each request, in order", "session_runs"),
    (
        "requests whose files message held `app.py` as the latest answer left it",
        "latest_files_message",
    ),
    ("requests that carried the conventions file", "conventions"),
    ("turns whose edit aider applied", "turns_applied"),
    ("`app.py` at the end is the last turn's", "file_at_end_is_last_turn"),
    ("aider's exit code", "exit"),
)


def table(results: Sequence[dict[str, Any]]) -> str:
    return results_table(results, ROWS)


def section(results: Sequence[dict[str, Any]], version_text: str) -> str:
    return (
        f"{HEADING}\n\n"
        f"`python -m bench.aider_cli --write` ({version_text} from PyPI in a venv of its own), "
        f"one chat of {TURNS} turns read from standard input: `aider --model openai/{MODEL} "
        "--openai-api-base <the proxy>/v1 --max-chat-history-tokens "
        f"{HISTORY_TOKENS} --edit-format whole --read CONVENTIONS.md app.py --no-git "
        "--yes-always --no-fancy-input` (and `--no-pretty --no-check-update "
        "--analytics-disable --no-show-model-warnings`), the tests' fake provider with a "
        f"{WINDOW:,}-token window. Each turn the fake model rewrites `app.py` "
        f"({LINES} functions, about 600 tokens) whole with a new version; aider applies it "
        "and sends the file's contents in its files message of the next request. Errors seen "
        "by aider and the proxy's session ids are read by a relay between aider and what it "
        f"talks to. The last column names `openai/{NAMED}` instead (the provider's window the "
        "same): a model aider's settings name, whose edit-format reminder is a system message "
        "of its own; for a model they do not name aider appends the reminder to the user's "
        "request, where the first request's copy has it and the history's copies do not:\n\n"
        + table(results)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aider", type=Path, help="an aider executable (else pip-installed)")
    parser.add_argument("--write", action="store_true", help="replace the section of RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aider-bench-") as scratch:
        root = Path(scratch)
        aider = args.aider or _install(root / "venv")
        version_text = subprocess.run(
            [str(aider), "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
        results = []
        for how, model in (("direct", MODEL), ("proxy", MODEL), ("proxy", NAMED)):
            results.append(run(aider, root, how, model))
            print(orjson.dumps(results[-1]).decode(), flush=True)
    print(table(results))
    if args.write:
        write_section(HEADING, section(results, version_text))


if __name__ == "__main__":
    main()
