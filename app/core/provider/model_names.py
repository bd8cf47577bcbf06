"""A model as agents name it, found in the model table.

Agents and their gateways spell one model many ways: `openai/gpt-4o` (LiteLLM),
`us.anthropic.claude-sonnet-4-5-20250929-v1:0` (Bedrock), `claude-sonnet-4-5@20250929`
(Vertex), `anthropic/claude-sonnet-4.5` (OpenRouter), `qwen2.5-coder:7b` (Ollama),
`GPT-4o`. A name and every key of the table are read the same way (`canonical`): lower
case, the routing prefix, region and vendor left out, the version tag and Vertex date
left out, Claude's dotted versions dashed, a family word split from its version
(`llama3.1` is `llama-3.1`, Bedrock's `llama3-1` too). Then the name is its own entry,
else the longest entry it extends at a `-` (a dated snapshot or a size is its family),
else the same with its minor version stepped down (`gpt-5.3` is read as the latest
release the table knows below it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from difflib import get_close_matches

from app.core.model_table import ModelSpec

_ROUTE = re.compile(r"^.*/")  # LiteLLM's `openai/`, OpenRouter's `anthropic/`, HF's `Qwen/`
_TAG = re.compile(r"[:@].*$")  # Ollama's `:7b`, Bedrock's `:0`, Vertex's `@20250929`
_BEDROCK_VERSION = re.compile(r"-v\d+$")
_VENDOR = re.compile(r"^(?:[a-z_-]+\.)+(?=[a-z])")  # Bedrock's `us.anthropic.`, `meta.`
_FAMILY_VERSION = re.compile(r"^([a-z]{3,})(\d)")  # `llama3.1`, `gemma3`, `qwen2.5`
_CLAUDE_DOT = re.compile(r"(?<=\d)\.(?=\d)")
_MINOR = re.compile(r"(\d+)\.(\d+)")
_DASHED_MINOR = re.compile(r"(?<=-\d)-(?=\d(?:-|$))")  # Bedrock's `llama3-1-70b`


def canonical(name: str) -> str:
    """`name` as the table is searched with it."""
    name = _ROUTE.sub("", name.strip().lower())
    name = _BEDROCK_VERSION.sub("", _TAG.sub("", name))
    name = _VENDOR.sub("", name)
    if name.startswith("claude"):
        name = _CLAUDE_DOT.sub("-", name)
    name = _FAMILY_VERSION.sub(r"\1-\2", name)
    if name.startswith("llama"):
        name = _DASHED_MINOR.sub(".", name, count=1)
    return name


def find_model(name: str, table: Mapping[str, ModelSpec]) -> ModelSpec | None:
    """The entry for `name`: its own (as written, then read canonically), else its family."""
    if name in table:
        return table[name]
    key = find_key(name, table)
    return table[key] if key is not None else None


def find_key(name: str, table: Mapping[str, ModelSpec]) -> str | None:
    """The table's key for `name`, or None."""
    index = _index(table)
    wanted = canonical(name)
    for prefix in _prefixes(wanted):
        for candidate in _older_releases(prefix):
            if candidate in index:
                return index[candidate]
    return None


def closest_names(name: str, table: Mapping[str, ModelSpec], count: int = 3) -> list[str]:
    """The table's keys whose names read most like `name`, best first (for a 422)."""
    index = _index(table)
    matches = get_close_matches(canonical(name), list(index), n=count, cutoff=0.5)
    return [index[m] for m in matches]


def _index(table: Mapping[str, ModelSpec]) -> dict[str, str]:
    """Each key read canonically; a key written canonically wins over one read so."""
    index = {canonical(key): key for key in table}
    index.update({key: key for key in table if key in index})
    return index


def _prefixes(name: str) -> Iterator[str]:
    """`name`, then each shorter prefix of it that ends before a `-`."""
    yield name
    cut = len(name)
    while (cut := name.rfind("-", 0, cut)) > 0:
        yield name[:cut]


def _older_releases(name: str) -> Iterator[str]:
    """`name`, then with its first `major.minor` stepped down to `major` (`gpt-5.2`,
    `gpt-5.1`, `gpt-5`): a release the table does not know yet is read as the latest one
    it knows of the same major version."""
    yield name
    match = _MINOR.search(name)
    if match is None:
        return
    major, minor = match.group(1), int(match.group(2))
    head, tail = name[: match.start()], name[match.end() :]
    for step in range(minor - 1, 0, -1):
        yield f"{head}{major}.{step}{tail}"
    yield f"{head}{major}{tail}"
