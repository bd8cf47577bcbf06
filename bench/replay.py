"""Long-session replay: `python -m bench.replay` (run by hand, not in CI).

Every conversation of `../shared/corpus-long/` (both shapes) is replayed message by message
through the app in-process (httpx ASGITransport with its lifespan, extractive summarizer,
temporary data and work directories; one app per conversation, so its token cache serves
every strategy and window), for each strategy and window: see `bench/replay_driver.py` for
the agent loop and `bench/replay_facts.py` for the ground-truth facts and how "kept" is
decided. Reported per replay and in total per strategy, window and shape: model requests,
compactions (and which strategy answered them), refusals by reason, the largest context
sent (flagged when at or over the window), compacted lists that break the provider's
rules, facts kept in the final context by kind, how many of the missing ones recall finds,
the ledger's tokens (rebuilt from the answers' `ledger` facts, cl100k) and wall time.

`--quick` replays only the smallest conversation (both shapes), for a smoke run.
`--json` prints the whole report as JSON instead of the tables; `--write` also puts the
tables into their section of `bench/RESULTS.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from bench.replay_agents import render_by_agent
from bench.replay_driver import Conversation, RunResult, ServiceClient, replay, run_from_json
from bench.replay_report import render, totals
from bench.results import write_section
from bench.run import machine

CORPUS_LONG = Path(__file__).resolve().parents[2] / "shared" / "corpus-long"
STRATEGIES = ("full", "tail", "selective", "prune")
WINDOWS = (32_000, 64_000, 128_000)
SECTION = "## Long-session replay"
AGENTS_SECTION = "## Wide-corpus replay"
SHAPES = ("anthropic", "openai")


def load_conversations(corpus: Path, quick: bool = False) -> list[Conversation]:
    """Every `<name>.anthropic.json` / `<name>.openai.json` of `corpus`, smallest first."""
    files = sorted(
        (p for p in corpus.glob("*.json") if p.name.endswith(tuple(f".{s}.json" for s in SHAPES))),
        key=lambda p: (p.stat().st_size, p.name),
    )
    if not files:
        raise SystemExit(f"no *.anthropic.json or *.openai.json conversations in {corpus}")
    names: list[str] = []
    for path in files:
        name = path.name.rsplit(".", 2)[0]
        if name not in names:
            names.append(name)
    if quick:
        names = names[:1]
    conversations = []
    for name in names:
        for shape in SHAPES:
            path = corpus / f"{name}.{shape}.json"
            if path.exists():
                data = json.loads(path.read_text(encoding="utf-8"))
                agent, split = str(data.get("agent", "")), str(data.get("split", ""))
                conversations.append(
                    Conversation(name, shape, data["messages"], agent, split)  # type: ignore[arg-type]
                )
    return conversations


@asynccontextmanager
async def in_process(tokenizer: TiktokenTokenizer) -> AsyncIterator[ServiceClient]:
    """The real app with its lifespan, extractive summarizer, in temporary directories."""
    with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
        settings = Settings(
            _env_file=None,
            workdir=tmp,
            data_dir=f"{tmp}/data",
            summarizer="extractive",
            log_level="warning",
        )
        app = create_app(settings, service=build_service(settings, tokenizer))
        async with LifespanManager(app) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://replay.test", timeout=600
            ) as client:
                yield ServiceClient(client)


async def run_all(
    conversations: Sequence[Conversation],
    strategies: Sequence[str],
    windows: Sequence[int],
    *,
    force: bool = False,
    progress: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    tokenizer = TiktokenTokenizer()
    runs: list[RunResult] = []
    for conversation in conversations:
        async with in_process(tokenizer) as service:
            for window in windows:
                for strategy in strategies:
                    run = await replay(
                        service, conversation, strategy, window, tokenizer.count, force=force
                    )
                    runs.append(run)
                    if progress:
                        progress(run)
    order = [(w, s) for w in windows for s in strategies]
    return sorted(runs, key=lambda r: order.index((r.window, r.strategy)))


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def runs_from_reports(paths: Sequence[Path]) -> list[RunResult]:
    """The runs of `--json` reports, a later report's runs of a conversation replacing an
    earlier one's."""
    by_conversation: dict[str, list[RunResult]] = {}
    for path in paths:
        runs = [run_from_json(r) for r in json.loads(path.read_text(encoding="utf-8"))["runs"]]
        for name in {r.conversation for r in runs}:
            by_conversation[name] = [r for r in runs if r.conversation == name]
    return [run for runs in by_conversation.values() for run in runs]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__)
    parser.add_argument("--corpus", type=Path, default=CORPUS_LONG, help="conversations dir")
    parser.add_argument("--strategies", type=_csv, default=list(STRATEGIES), help="comma-separated")
    parser.add_argument(
        "--windows",
        type=lambda t: [int(w) for w in _csv(t)],
        default=list(WINDOWS),
        help="comma-separated context windows in tokens",
    )
    parser.add_argument("--quick", action="store_true", help="only the smallest conversation")
    parser.add_argument("--force", action="store_true", help="send `force: true` to /compact")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    parser.add_argument(
        "--by-agent",
        action="store_true",
        help="report per agent kind and split, with the issue-36 targets (the wide corpus)",
    )
    parser.add_argument("--section", help="the RESULTS.md section to write (a `## ` heading)")
    parser.add_argument(
        "--from-json",
        type=Path,
        action="append",
        default=[],
        help="render the runs of earlier --json reports instead of replaying (a later "
        "report's runs of a conversation replace an earlier one's)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.strategies) - set(STRATEGIES))
    if unknown:
        parser.error(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    return args


def report_json(runs: Sequence[RunResult], command: str, seconds: float) -> dict[str, Any]:
    return {
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "wall_seconds": round(seconds, 1),
        "totals": totals(runs),
        "runs": [r.as_json() for r in runs],
    }


LEGEND = """\
Each conversation replayed message by message through the app in-process (extractive
summarizer): `/should-compact` with the window before every assistant turn, `/compact`
(strategy, window, a session id per replay) when told, continuing from the compacted list
("Continue." after a trailing assistant turn). *LLM calls*: model requests made;
*compactions / within 3 requests of the last*: successful compactions, and how many of them
came at most 3 requests after the previous one (the context refilled at once); *refusals*:
`compacted: false` answers by reason; *largest context sent*: the most tokens (cl100k) sent
in one model request, share of the window, **OVER ×n** when n requests were at or over the
window; *invalid*: compacted lists that break the provider's rules (`app/core/provider/rules.py`);
*answered by*: the strategy that produced each compaction (another than the one asked
for is a fallback); the fact columns: ground-truth facts of the original session found in
the final context, by kind (rules in `bench/replay_facts.py`: errors flagged `is_error`
apart from error lines found in unflagged output, which in the OpenAI shape is every
error; the user's first request apart from the later ones), and *all facts* together;
*missing found by recall*: of the facts the final context lacks, those that
`POST /sessions/{id}/recall` (the fact as the query) finds in an archived message; *ledger
max*: the largest ledger of any answer, rebuilt from its `ledger` facts, and its share of
the window; *wall s*: the replays' time. The first table sums the conversations per
strategy, window and shape."""


def section(report: dict[str, Any], tables: str, heading: str = SECTION) -> str:
    return (
        f"{heading}\n\n`{report['command']}` on {report['date']}, {report['machine']}; "
        f"{report['wall_seconds']} s in all.\n\n{LEGEND}\n\n{tables}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python -m bench.replay " + " ".join(sys.argv[1:] if argv is None else argv)

    def progress(run: RunResult) -> None:
        print(
            f"{run.conversation} {run.shape} {run.strategy} {run.window}: "
            f"{run.compactions} compactions, max {run.max_sent_tokens}, "
            f"{run.wall_seconds:.1f} s",
            file=sys.stderr,
        )

    started = time.perf_counter()
    if args.from_json:
        runs = runs_from_reports(args.from_json)
    else:
        conversations = load_conversations(args.corpus, args.quick)
        runs = asyncio.run(
            run_all(
                conversations, args.strategies, args.windows, force=args.force, progress=progress
            )
        )
    seconds = time.perf_counter() - started
    if args.from_json:
        seconds = sum(r.wall_seconds for r in runs)  # the replays' own time
    report = report_json(runs, command.strip(), seconds)
    tables = render_by_agent(runs) if args.by_agent else render(runs, report["totals"])
    heading = args.section or (AGENTS_SECTION if args.by_agent else SECTION)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(section(report, tables, heading))
    if args.write:
        write_section(heading, section(report, tables, heading))
    return 0


if __name__ == "__main__":
    sys.exit(main())
