"""What the proxy leaves on disk: `python -m bench.proxy_disk` (run by hand, never in CI).

The long sessions of `bench.proxy` (`bench/proxy_replay.py`, the same times) replayed
through the proxy on the file stores, each in a data directory of its own, the app
stopped after it (so what its stop lets go is gone). Per replay: the bytes of every file
in the data directory (archives, recall indexes, records, session lists), the archives
left and the heads put in, and the records listed as `compacted`. An agent-hour is the
replay's requests at `--turn-seconds` each (the scenario's turn, not the scaled one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.proxy_replay import replay
from bench.replay import CORPUS_LONG, load_conversations

MB = 1_000_000


def disk(data: Path) -> dict[str, Any]:
    """The data directory's bytes by top-level folder, its archives, and its records by
    outcome."""
    sizes: dict[str, int] = {}
    outcomes: dict[str, int] = {}
    for root, _, files in os.walk(data):
        top = Path(root).relative_to(data).parts[:1]
        folder = top[0] if top else "."
        for name in files:
            path = Path(root) / name
            sizes[folder] = sizes.get(folder, 0) + path.stat().st_size
            if path.parent.name == "compactions" and name.endswith(".json"):
                outcome = str(orjson.loads(path.read_bytes()).get("outcome"))
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    archives = data / "archives"
    count = len([p for p in archives.glob("*.json")]) if archives.is_dir() else 0
    return {"bytes": sizes, "archives": count, "records": outcomes}


async def measure(args: argparse.Namespace, data: Path) -> list[dict[str, Any]]:
    rows = []
    for window in args.windows:
        for c in load_conversations(args.corpus, quick=args.quick):
            where = data / f"{c.name}.{c.shape}.{window}"
            done = await replay(
                c.name,
                c.shape,
                c.messages,
                window,
                where,
                args.summary_seconds * args.time_scale,
                args.turn_seconds * args.time_scale,
                local_seconds=args.turn_seconds,
            )
            found = disk(where)
            hours = done.requests * args.turn_seconds / 3600
            total = sum(found["bytes"].values())
            row = {
                "session": c.name,
                "shape": c.shape,
                "window": window,
                "requests": done.requests,
                "heads_put_in": sum(done.compactions.values()),
                **found,
                "mb_per_agent_hour": total / MB / hours if hours else None,
            }
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]], turn_seconds: float) -> dict[str, Any]:
    total = sum(sum(r["bytes"].values()) for r in rows)
    hours = sum(r["requests"] for r in rows) * turn_seconds / 3600
    folders: dict[str, int] = {}
    for r in rows:
        for k, v in r["bytes"].items():
            folders[k] = folders.get(k, 0) + v
    return {
        "replays": len(rows),
        "agent_hours": round(hours, 2),
        "mb_per_agent_hour": round(total / MB / hours, 2) if hours else None,
        "mb_by_folder": {k: round(v / MB, 1) for k, v in sorted(folders.items())},
        "archives": sum(r["archives"] for r in rows),
        "heads_put_in": sum(r["heads_put_in"] for r in rows),
        "records_compacted": sum(r["records"].get("compacted", 0) for r in rows),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS_LONG)
    parser.add_argument(
        "--windows", type=lambda s: [int(w) for w in s.split(",")], default=[32_000, 64_000]
    )
    parser.add_argument("--summary-seconds", type=float, default=10.0)
    parser.add_argument("--turn-seconds", type=float, default=5.0)
    parser.add_argument("--time-scale", type=float, default=0.02)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as data:
        rows = asyncio.run(measure(args, Path(data)))
    print(json.dumps({"total": summary(rows, args.turn_seconds), "per_run": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
