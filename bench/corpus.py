"""Benchmark inputs built from the real transcripts shipped in `tests/data/corpus/`.

`BENCH_CORPUS=/path/to/dir` runs the benchmarks over another directory of transcripts in
the same shape (for example a larger corpus kept outside the repository).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from app.core.messages import Message
from app.core.ports import Tokenizer
from app.core.tokens import count_messages

DEFAULT_CORPUS_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"
CORPUS_DIR = Path(os.environ.get("BENCH_CORPUS") or DEFAULT_CORPUS_DIR)

Msg = dict[str, Any]


class CorpusMissingError(RuntimeError):
    pass


def corpus_files(corpus_dir: Path = CORPUS_DIR) -> list[Path]:
    files = sorted(corpus_dir.glob("*.anthropic.json"))
    if not files:
        raise CorpusMissingError(
            f"no *.anthropic.json transcripts in {corpus_dir}: the benchmark reads "
            "tests/data/corpus/ of the repository, or the directory BENCH_CORPUS names"
        )
    return files


def load_transcripts(corpus_dir: Path = CORPUS_DIR) -> list[list[Msg]]:
    return [json.loads(p.read_text())["messages"] for p in corpus_files(corpus_dir)]


def _renumbered(messages: list[Msg], prefix: str) -> list[Msg]:
    """A copy whose tool ids carry `prefix`, so that concatenated copies stay unique."""
    out = copy.deepcopy(messages)
    for message in out:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    block["id"] = f"{prefix}{block['id']}"
                elif block.get("type") == "tool_result":
                    block["tool_use_id"] = f"{prefix}{block['tool_use_id']}"
    return out


def build_transcript(
    tokenizer: Tokenizer, target_tokens: int, corpus_dir: Path = CORPUS_DIR
) -> list[Msg]:
    """Transcripts concatenated (one system prompt first) until `target_tokens` is reached;
    the last transcript is cut message by message so the total lands just above it."""
    transcripts = load_transcripts(corpus_dir)
    head = [m for m in transcripts[0] if m["role"] == "system"][:1]
    out = list(head)
    total = sum(count_messages(tokenizer, [Message.model_validate(m) for m in out]))
    copy_no = 0
    while True:
        for transcript in transcripts:
            body = [m for m in transcript if m["role"] != "system"]
            for message in _renumbered(body, f"c{copy_no}_"):
                out.append(message)
                total += count_messages(tokenizer, [Message.model_validate(message)])[0]
                if total >= target_tokens:
                    return out
            copy_no += 1


def salted(messages: list[Msg], tag: str) -> list[Msg]:
    """A copy with `tag` at the start of every message's text, so that no count of an
    earlier round is in the token cache (a cold count), at a few tokens per message."""
    out = copy.deepcopy(messages)
    for message in out:
        content = message["content"]
        if isinstance(content, str):
            message["content"] = f"{tag} {content}"
            continue
        first = content[0] if content else None
        if first is not None and first.get("type") == "text":
            first["text"] = f"{tag} {first['text']}"
        elif (
            first is not None
            and first.get("type") == "tool_result"
            and isinstance(first.get("content"), str)
        ):
            first["content"] = f"{tag} {first['content']}"
        else:
            content.insert(0, {"type": "text", "text": tag})
    return out


def with_file_reads(messages: list[Msg], paths: list[str]) -> list[Msg]:
    """`messages` plus one `read_file` call and result per path (restoration candidates)."""
    out = list(messages)
    for i, path in enumerate(paths):
        tool_id = f"bench_read_{i}"
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Let me read {path}."},
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "read_file",
                        "input": {"path": path},
                    },
                ],
            }
        )
        out.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "..."}],
            }
        )
    return out


def write_workdir_files(root: Path, count: int, lines: int = 120) -> list[str]:
    """`count` Python-like source files under `root`, ~10 tokens a line; their paths."""
    paths = []
    for i in range(count):
        path = f"src/module_{i}.py"
        body = "\n".join(
            f"def function_{i}_{n}(value):\n    return value * {n}" for n in range(lines)
        )
        (root / "src").mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body + "\n")
        paths.append(path)
    return paths
