"""Cursor sessions as SpecStory writes them (`.specstory/history/*.md`, 2025 format).

A history is sections split by `---` lines, each opened by `_**User**_`, `_**Assistant**_`
or `_****_` (the assistant going on). SpecStory records the agent's tool calls as blocks:
a fenced `bash` command and the fenced output after it (`run_terminal_cmd`), `Read file:
PATH` (`read_file`; the file's text is not recorded), a `<details>` listing or search
(`list_dir`, `codebase_search`, `grep_search`, `file_search`) and a fenced `diff`
(`edit_file`, its path from a `this_file:` line when the diff has one). Cursor's tool and
argument names are used; what SpecStory did not record is said in the result.
"""

from __future__ import annotations

import re

from bench.corpus_wide.session import Transcript

_SECTION = re.compile(r"\n---\n")
_HEAD = re.compile(r"^_\*\*(User|Assistant|)\*\*_[ \t]*\n", re.MULTILINE)
_BLOCK = re.compile(
    r"^```bash\n(?P<cmd>.*?)\n```\n(?:\s*\n)*(?:```\n(?P<out>.*?)\n```)?"
    r"|^Read file: (?P<read>.+)$"
    r"|^<details>\s*<summary>(?P<summary>.*?)</summary>(?P<body>.*?)</details>"
    r"|^```diff\n(?P<diff>.*?)\n```",
    re.DOTALL | re.MULTILINE,
)
_LISTED = re.compile(r"^Listed (?:current )?directory\s*(?P<path>\S*)")
_SEARCH = re.compile(r'^(?P<kind>Searched codebase|Grep search for|Searched files)\s+"(?P<q>.*?)"')
_THIS_FILE = re.compile(r"this_file:\s*(\S+)")
_SEARCH_TOOLS = {
    "Searched codebase": "codebase_search",
    "Grep search for": "grep_search",
    "Searched files": "file_search",
}
NOT_RECORDED = "(SpecStory did not record this result)"


def convert(text: str) -> Transcript:
    transcript = Transcript()
    role = "user"
    for section in _SECTION.split(text):
        head = _HEAD.search(section)
        if head is not None:
            role = "user" if head.group(1) == "User" else "assistant"
            section = section[head.end() :]
        elif not section.strip() or section.lstrip().startswith("## SpecStory"):
            continue
        if role == "user":
            transcript.user(section)
        else:
            _assistant(transcript, section)
    return transcript


def _assistant(transcript: Transcript, section: str) -> None:
    at = 0
    for block in _BLOCK.finditer(section):
        transcript.say(section[at : block.start()])
        at = block.end()
        if block.group("cmd") is not None:
            output = block.group("out")
            transcript.call(
                "run_terminal_cmd",
                {"command": block.group("cmd").strip()},
                output if output is not None else NOT_RECORDED,
            )
        elif block.group("read") is not None:
            path = block.group("read").strip()
            transcript.call("read_file", {"target_file": path}, NOT_RECORDED)
        elif block.group("summary") is not None:
            _details(transcript, block.group("summary"), block.group("body"))
        else:
            diff = block.group("diff")
            named = _THIS_FILE.search(diff)
            arguments = {"target_file": named.group(1)} if named else {}
            transcript.call("edit_file", arguments | {"code_edit": diff}, NOT_RECORDED)
    transcript.say(section[at:])


def _details(transcript: Transcript, summary: str, body: str) -> None:
    result = f"{summary.strip()}\n{body.strip()}"
    listed = _LISTED.match(summary.strip())
    if listed is not None:
        path = listed.group("path") or "."
        transcript.call("list_dir", {"relative_workspace_path": path}, result)
        return
    search = _SEARCH.match(summary.strip())
    if search is not None:
        tool = _SEARCH_TOOLS[search.group("kind")]
        transcript.call(tool, {"query": search.group("q")}, result)
        return
    transcript.say(f"<details><summary>{summary}</summary>{body}</details>")
