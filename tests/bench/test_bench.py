"""Smoke tests of the benchmark runner on tiny inputs: it imports, builds its inputs and
measures. No timing is asserted here; the numbers live in bench/RESULTS.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message
from app.core.tokens import count_total
from bench import corpus
from bench.run import TARGETS, Config, Run, measure_cache_memory, measure_counting, report
from bench.server import running_server


def parsed(messages: list[corpus.Msg]) -> list[Message]:
    return [Message.model_validate(m) for m in messages]


def test_transcript_reaches_the_target_with_one_system_prompt_and_unique_ids(
    tokenizer: TiktokenTokenizer,
) -> None:
    messages = corpus.build_transcript(tokenizer, 30_000)
    assert count_total(tokenizer, parsed(messages)) >= 30_000
    assert [m["role"] for m in messages].count("system") == 1
    assert messages[0]["role"] == "system"
    ids = [
        b["id"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
    assert len(ids) == len(set(ids))


def test_salting_changes_every_message_text(tokenizer: TiktokenTokenizer) -> None:
    messages = corpus.build_transcript(tokenizer, 3_000)
    salted = corpus.salted(messages, "[x]")
    assert len(salted) == len(messages)
    for before, after in zip(parsed(messages), parsed(salted), strict=True):
        assert count_total(tokenizer, [after]) > count_total(tokenizer, [before])


def test_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(corpus.CorpusMissingError, match="BENCH_CORPUS"):
        corpus.corpus_files(tmp_path)


@pytest.mark.slow
def test_bench_measures_counting_against_a_real_server(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    paths = corpus.write_workdir_files(workdir, 2, lines=3)
    messages = corpus.with_file_reads(corpus.build_transcript(tokenizer, 2_000), paths)
    run = Run()
    with running_server(workdir, tmp_path / "data") as (url, _):
        measure_counting(url, messages, tokenizer._encoding, Config(repeat=1), run)
    assert run.facts["token_count"] > 2_000
    assert {"raw_tiktoken", "count_cold", "count_append"} <= set(run.values)


def test_report_lists_every_target() -> None:
    run = Run()
    measure_cache_memory(100, run)
    run.values.update(
        dict.fromkeys(
            (
                *("raw_tiktoken", "count_cold", "count_append", "fake_llm_compact"),
                *("fake_llm_count", "extractive_compact", "extractive_count"),
            ),
            0.1,
        )
        | {"healthz_p99": 0.001, "concurrent_wall": 1.1, "memory_over_idle_bytes": 100.0}
    )
    run.facts.update(
        token_count=10,
        message_count=2,
        body_bytes=100,
        concurrent_body_bytes=50,
        memory_body_bytes=100,
        memory_idle_kib=1,
        memory_peak_kib=2048,
        restored_files=5,
        healthz_samples=3,
    )
    text = report(Config(), [run, run], "python -m bench")
    for target in TARGETS:
        assert target.name in text
    assert "| peak RSS during that /compact (MiB) | 2.0 | 2.0 |" in text
