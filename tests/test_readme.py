"""The README stays a newcomer's page: the two commands first, short, every link alive."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_two_commands_come_first() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.DOTALL)
    assert first_block is not None
    assert README.index("```bash") < README.index("\n## ")
    assert first_block.group(1).splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/context-compact serve",
        "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e '.[dev]' "
        "&& .venv/bin/python -m pytest",
    ]


def test_it_stays_about_two_hundred_lines() -> None:
    assert len(README.splitlines()) <= 230


def test_every_local_link_of_the_readme_and_docs_resolves() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if link.startswith(("http://", "https://", "mailto:")):
                continue
            assert (page.parent / link).exists(), f"{page.name}: {link}"
