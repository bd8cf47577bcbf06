"""Each benchmark replaces only its own section of RESULTS.md."""

from __future__ import annotations

from pathlib import Path

from bench.results import write_section

BEFORE = (
    "# Benchmark results\n\n## Notes\n\nby hand\n\n## Load\n\nold\n\n## Summary fidelity\n\nf\n"
)


def test_a_section_is_replaced_in_place_and_the_others_are_kept(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(BEFORE)
    write_section("## Load", "## Load\n\nnew\n", results)
    assert results.read_text() == (
        "# Benchmark results\n\n## Notes\n\nby hand\n\n## Load\n\nnew\n\n## Summary fidelity\n\nf\n"
    )


def test_a_new_section_is_appended_at_the_end(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Notes\n\nby hand\n")
    write_section("## Load", "## Load\n\nnew\n", results)
    assert results.read_text() == "# Benchmark results\n\n## Notes\n\nby hand\n\n## Load\n\nnew\n"
