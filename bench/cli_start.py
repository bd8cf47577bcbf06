"""Command-line start benchmark: `python -m bench.cli_start` (see docs/development.md).

Times whole processes, as an agent's harness runs them: `context-compact count` and
`context-compact compact` of `examples/compact-request.json` (each a fresh interpreter
calling the checkout's entry point, as the console script does), the same
`count` with the Anthropic SDK's key in the environment, and `python -c pass` beside them
for the interpreter's own start. The runs are interleaved (each round runs every command
once) so that a busy neighbour slows all of them alike; the figure is the median wall time
of `--runs` rounds, after one warm-up round that also leaves the bytecode caches written.
With `--before PATH` (a checkout of another revision, e.g. `git archive main | tar -x -C
PATH`) the same commands run from there too, in the same rounds. `--write` replaces the
`## Command-line start` section of `bench/RESULTS.md`.

Beside them, in this process: what a second tokenizer lane (the server's) would cost a
command, its copy of the encoding, against counting a 200k-token session in one lane.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.adapters.tokenizer import TiktokenTokenizer, _copy, bundled_encoding_path, load_encoding
from app.core.messages import Message
from app.core.tokens import count_messages
from bench.corpus import build_transcript
from bench.results import write_section
from bench.run import machine

SECTION = "## Command-line start"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "examples/compact-request.json"
TARGET_SECONDS = 0.5
# What the console script runs: the checkout's own entry point (see `console_script`).
CONSOLE = "CONSOLE_SCRIPT"
# Set in an agent's environment for its own SDK; not a key of ours, and not a real one.
SDK_KEY = {"ANTHROPIC_API_KEY": "sk-ant-bench-unused"}


@dataclass(frozen=True)
class Command:
    label: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    from_checkout: bool = True  # run from the checkout measured (`python -c pass` is not)


COMMANDS = (
    Command("`python -c pass`", ("-c", "pass"), from_checkout=False),
    Command("`context-compact count`", ("-c", CONSOLE, "count", EXAMPLE)),
    Command("`context-compact compact`", ("-c", CONSOLE, "compact", EXAMPLE)),
    Command(
        "`context-compact count`, ANTHROPIC_API_KEY set",
        ("-c", CONSOLE, "count", EXAMPLE),
        tuple(SDK_KEY.items()),
    ),
)


def base_env(data_dir: Path) -> dict[str, str]:
    """The caller's environment without our settings, with a scratch data directory; the
    bytecode caches are used, as in an installed package."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("ANTHROPIC_API_KEY", None)
    return env | {"COMPACT_DATA_DIR": str(data_dir), "COMPACT_LOG_LEVEL": "error"}


def console_script(checkout: Path) -> str:
    """The code the `context-compact` script of `checkout` runs: its entry point in
    pyproject.toml, called as pip's generated script calls it."""
    scripts = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["context-compact"].split(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def run_once(command: Command, checkout: Path, env: dict[str, str]) -> float:
    """Wall seconds of one run; a failing command stops the benchmark."""
    argv = [console_script(checkout) if arg == CONSOLE else arg for arg in command.argv]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=checkout,
        env=env | dict(command.env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command.label} in {checkout} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def measure(checkouts: Sequence[Path], runs: int) -> dict[tuple[str, Path], list[float]]:
    """Wall seconds of every command from every checkout, `runs` interleaved rounds."""
    times: dict[tuple[str, Path], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="cli-start-") as scratch:
        env = base_env(Path(scratch) / "data")
        for round_ in range(runs + 1):
            for checkout in checkouts:
                for command in COMMANDS:
                    if not command.from_checkout and checkout != checkouts[-1]:
                        continue
                    elapsed = run_once(command, checkout, env)
                    if round_:  # the first round warms caches and writes bytecode
                        times.setdefault((command.label, checkout), []).append(elapsed)
    return times


def lane_cost(rounds: int = 7) -> tuple[float, float, int]:
    """Median seconds of copying the encoding (a second lane) and of counting a 200k-token
    session in one lane, and that session's tokens."""
    encoding = load_encoding(bundled_encoding_path())
    tokenizer = TiktokenTokenizer(lanes=1)
    session = [Message.model_validate(m) for m in build_transcript(tokenizer, 200_000)]
    copies, counts = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        _copy(encoding)
        copies.append(time.perf_counter() - started)
        started = time.perf_counter()
        tokens = sum(count_messages(tokenizer, session))
        counts.append(time.perf_counter() - started)
    return statistics.median(copies), statistics.median(counts), tokens


def report(
    times: dict[tuple[str, Path], list[float]],
    before: Path | None,
    runs: int,
    lanes: tuple[float, float, int] | None = None,
) -> str:
    after = ROOT
    interpreter = statistics.median(times[(COMMANDS[0].label, after)])
    columns = ["before", "after"] if before is not None else ["this revision"]
    lines = [
        SECTION,
        "",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine()}; "
        f"load average {os.getloadavg()[0]:.1f} at the end (a shared machine)",
        f"- command: `python -m bench.cli_start --runs {runs}"
        + (" --before PATH" if before is not None else "")
        + " --write`",
        f"- each a fresh process from the checkout, as the console script runs it, on "
        f"`{EXAMPLE}` (the README's example session; `compact` with the default extractive "
        "summarizer); "
        f"median wall time of {runs} interleaved rounds (min in brackets); target: under "
        f"{TARGET_SECONDS} s",
        "",
        "| command | " + " | ".join(columns) + " | after ÷ `python -c pass` |",
        "|---|" + "---:|" * (len(columns) + 1),
    ]
    for command in COMMANDS:
        cells = []
        for checkout in ([before] if before is not None else []) + [after]:
            found = times.get((command.label, checkout))
            cells.append(f"{statistics.median(found):.3f} s ({min(found):.3f})" if found else "—")
        ratio = statistics.median(times[(command.label, after)]) / interpreter
        lines.append(f"| {command.label} | " + " | ".join(cells) + f" | {ratio:.1f}× |")
    if lanes is not None:
        copy, count, tokens = lanes
        lines += [
            "",
            f"A second tokenizer lane (the server has two) would cost a command "
            f"{copy * 1000:.0f} ms to copy the encoding; counting a {tokens:,}-token session "
            f"in one lane takes {count * 1000:.0f} ms (medians of 7, in-process): the "
            "commands build one.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cli_start", description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="interleaved rounds (20)")
    parser.add_argument("--before", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--write", action="store_true", help="replace the RESULTS.md section")
    args = parser.parse_args(argv)
    before = args.before.resolve() if args.before is not None else None
    checkouts = [before, ROOT] if before is not None else [ROOT]
    section = report(measure(checkouts, args.runs), before, args.runs, lane_cost())
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
