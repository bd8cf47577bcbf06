"""A summarizer server's tokens per cl100k token: the ratio sample against real transcripts.

  python -m bench.server_ratio --base-url http://127.0.0.1:P/v1 [--model M] [--label T] [--write]

Asks the server for its count (llama.cpp and vLLM `POST /tokenize`, llama-cpp-python
`POST /extras/tokenize/count`, as the service does) of `app.core.summary.server_ratio`'s sample and
of every corpus transcript as a summary prompt (system + user prompt), beside cl100k's
count. The service fits budgets with the sample's ratio times `RATIO_MARGIN`: the table
says whether that covers the transcripts' ratios (a transcript with a higher ratio would
fill a chunk past the window by that share).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.adapters.llm_probe import ModelsProbe, ProbeTiming
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.summary.prompt import SUMMARY_SYSTEM, build_summary_prompt, serialize_for_summary
from app.core.summary.server_ratio import RATIO_MARGIN, ratio_sample
from bench.corpus import CORPUS_DIR, corpus_files, load_transcripts
from bench.results import RESULTS, write_section

HEADING = "## Server token ratio (bench.server_ratio)"


@dataclass(frozen=True)
class Count:
    name: str
    cl100k: int
    server: int

    @property
    def ratio(self) -> float:
        return self.server / self.cl100k


def texts(corpus: Path) -> list[tuple[str, str]]:
    """The sample, then each transcript as the summary call sends it."""
    out = [("ratio sample", ratio_sample())]
    for path, raw in zip(corpus_files(corpus), load_transcripts(corpus), strict=True):
        messages = [Message.model_validate(m) for m in raw if m.get("role") != "system"]
        prompt = build_summary_prompt(serialize_for_summary(messages))
        out.append((path.name.removesuffix(".anthropic.json"), f"{SUMMARY_SYSTEM}\n{prompt}"))
    return out


async def measure(probe: ModelsProbe, corpus: Path) -> list[Count]:
    count = TiktokenTokenizer().count
    rows: list[Count] = []
    for name, text in texts(corpus):
        server = await probe.server_tokens(text)
        if server is None:
            raise SystemExit("the server has no tokenize endpoint: nothing to measure")
        rows.append(Count(name, count(text), server))
    return rows


def render(rows: Sequence[Count], model: str, command: str) -> str:
    sample, transcripts = rows[0], rows[1:]
    used = sample.ratio * RATIO_MARGIN
    highest = max(transcripts, key=lambda r: r.ratio)
    over = highest.ratio / used - 1
    lines = [
        HEADING,
        "",
        f"Server model: {model}. Command: `{command}`.",
        "",
        "| text | cl100k tokens | server tokens | ratio |",
        "|---|---|---|---|",
        *(f"| {r.name} | {r.cl100k} | {r.server} | {r.ratio:.4f} |" for r in rows),
        "",
        f"- the ratio the service fits with: {sample.ratio:.4f} × {RATIO_MARGIN} = {used:.4f}",
        f"- the transcripts' ratios: {min(r.ratio for r in transcripts):.4f}–"
        f"{highest.ratio:.4f} (highest: {highest.name}); "
        + (
            "covered"
            if used >= highest.ratio
            else f"**not covered**: a chunk of it takes {over:.1%} more than fitted"
        ),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    doc = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.server_ratio", description=doc)
    parser.add_argument("--base-url", required=True, help="the server, up to /v1")
    parser.add_argument("--model", default="local", help="the model named to the server")
    parser.add_argument("--label", help="what the server runs, for the table (default: --model)")
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    parser.add_argument("--write", action="store_true", help=f"write the section of {RESULTS}")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    async def run() -> list[Count]:
        probe = ModelsProbe(args.base_url, model=args.model, timing=ProbeTiming(timeout=60.0))
        try:
            return await measure(probe, args.corpus)
        finally:
            await probe.aclose()

    rows = asyncio.run(run())
    command = "python -m bench.server_ratio " + shlex.join(argv or sys.argv[1:])
    section = render(rows, args.label or args.model, command)
    print(section)
    if args.write:
        write_section(HEADING, section, args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
