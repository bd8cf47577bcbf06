"""Sections of `bench/RESULTS.md` that belong to one benchmark each.

`python -m bench` rewrites everything above `## Notes`; every other benchmark owns one
`## ...` section after it and replaces only that section, so no run erases another's.
"""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, section: str, results: Path = RESULTS) -> None:
    """Replace the section that starts with `heading` (a `## ...` line) by `section`, or
    append `section` at the end when there is none yet."""
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
    if heading in text:
        before, _, after = text.partition(heading)
        following = after.find("\n## ")
        rest = after[following + 1 :] if following >= 0 else ""
        text = before + (section.rstrip("\n") + "\n\n" + rest if rest else section)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    results.write_text(text, encoding="utf-8")
