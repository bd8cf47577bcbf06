from __future__ import annotations

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.cut import CUT_TAG, cut_note, cut_text, prefix_within
from app.core.provider.dialects import from_openai
from app.core.summary.chunking import (
    Unit,
    cut_unit,
    next_chunk,
    prompt_tokens,
    transcript_bound,
    transcript_costs,
    units_of,
)
from app.core.tokens import count_messages
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.corpus import FILES, load
from tests.fakes.tokenizer import WordTokenizer

WORDS = WordTokenizer()


def test_a_tool_call_and_its_answer_are_one_unit_and_requests_start_rounds() -> None:
    messages = parse(
        [
            user("u1"),
            assistant("a", tool_use("bash", "t1")),
            tool_result("t1", "r1"),
            assistant("done"),
            user("u2"),
            assistant(tool_use("bash", "t2")),
            tool_result("t2", "r2"),
        ]
    )
    units = units_of(messages, [1, 2, 3, 4, 5, 6, 7])
    assert [(len(u.messages), u.cost, u.starts_round) for u in units] == [
        (1, 1, True),
        (2, 5, False),
        (1, 4, False),
        (1, 5, True),
        (2, 13, False),
    ]
    assert units[1].messages == tuple(messages[1:3])


def _units(*rounds: list[int]) -> list[Unit]:
    return [Unit((), cost, i == 0) for costs in rounds for i, cost in enumerate(costs)]


def test_a_chunk_takes_whole_rounds_while_they_fit() -> None:
    units = _units([10, 30, 5], [10, 30])
    assert next_chunk(units, 0, 100) == 5
    assert next_chunk(units, 0, 50) == 3
    assert next_chunk(units, 3, 40) == 5


def test_a_round_too_long_for_a_chunk_is_split_between_units() -> None:
    units = _units([10, 30, 5], [10, 30])
    assert next_chunk(units, 0, 30) == 1
    assert next_chunk(units, 1, 40) == 3
    assert next_chunk(units, 1, 34) == 2


def test_a_unit_larger_than_the_room_is_left_to_the_caller_to_cut() -> None:
    assert next_chunk(_units([10, 30]), 0, 5) == 0


def test_a_unit_too_large_for_a_chunk_is_cut_with_a_visible_marker() -> None:
    call = tool_use("bash", "t1", command="cat log")
    messages = parse([assistant("Reading.", call), tool_result("t1", "line " * 3000)])
    cut = cut_unit(messages, 200, WORDS.count, WORDS.count_batch)
    assert sum(transcript_costs(cut, WORDS.count_batch)) <= 200
    assert cut[0] == messages[0]
    result = cut[1].blocks()[0]
    assert result.model_dump(exclude_unset=True) == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "line " * 51 + "line\n" + cut_note(3000, 52),
    }


def test_text_is_cut_to_a_prefix_within_the_token_budget() -> None:
    text = "a b c d e f"
    assert prefix_within(text, 3, WORDS.count) == "a b c "
    assert cut_text(text, 3, WORDS.count) == "a b c\n" + cut_note(6, 3)
    assert cut_text(text, 6, WORDS.count) == text
    assert CUT_TAG in cut_note(6, 3)


def test_the_exact_prompt_size_counts_system_and_prompt() -> None:
    messages = parse([user("one two three")])
    small = prompt_tokens(messages, 1200, None, WORDS.count)
    assert prompt_tokens(parse([user("one two three four")]), 1200, None, WORDS.count) == (
        small + 1
    )


def test_the_transcript_bound_holds_for_every_corpus_message(
    tokenizer: TiktokenTokenizer,
) -> None:
    checked = 0
    for path in FILES:
        raw = load(path)
        messages = from_openai(raw) if path.name.endswith(".openai.json") else parse(raw)
        costs = transcript_costs(messages, tokenizer.count_batch)
        counted = count_messages(tokenizer, messages)
        for message, cost, n in zip(messages, costs, counted, strict=True):
            assert transcript_bound(message, n) >= cost
            checked += 1
    assert checked > 0
