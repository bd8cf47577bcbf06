"""Tool-result compression over the corpus: history characters before and after.

Usage: python -m bench.tool_results

Every `tool_use` of the corpus's *.anthropic.json (`bench/corpus.py`) is paired with its
`tool_result`; the result's text is compressed with the default limits and the characters of
the compressed JSON (`content`, what history would store) are compared with the result's
text. Grouped by the rule that applied. Pure CPU, a second or two; prints a table.
"""

from __future__ import annotations

import json
import platform
from collections import defaultdict
from itertools import pairwise

from app.core.messages import Message, ToolResultBlock, tool_result_text, tool_uses
from app.core.toolkit.results import ToolResultLimits, compress_tool_result
from bench.corpus import CORPUS_DIR

CORPUS = CORPUS_DIR


def main() -> None:
    limits = ToolResultLimits()
    before: dict[str, int] = defaultdict(int)
    after: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    for path in sorted(CORPUS.glob("*.anthropic.json")):
        messages = [Message.model_validate(m) for m in json.loads(path.read_text())["messages"]]
        for message, reply in pairwise(messages):
            results = {
                b.tool_use_id: b
                for b in (reply.content if not isinstance(reply.content, str) else [])
                if isinstance(b, ToolResultBlock)
            }
            for call in tool_uses(message):
                block = results.get(call.id)
                if block is None:
                    continue
                text = tool_result_text(block)
                out = compress_tool_result(
                    call.name, call.input, text, limits, is_error=bool(block.is_error)
                )
                calls[out.rule] += 1
                before[out.rule] += len(text)
                after[out.rule] += len(out.content)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print("| rule | results | chars before | chars after | after/before |")
    print("|---|---:|---:|---:|---:|")
    for rule in sorted(calls, key=lambda r: -before[r]):
        ratio = after[rule] / before[rule] if before[rule] else 0.0
        print(f"| {rule} | {calls[rule]} | {before[rule]} | {after[rule]} | {ratio:.2f} |")
    total_before, total_after = sum(before.values()), sum(after.values())
    print(
        f"| all | {sum(calls.values())} | {total_before} | {total_after} | "
        f"{total_after / total_before:.2f} |"
    )


if __name__ == "__main__":
    main()
