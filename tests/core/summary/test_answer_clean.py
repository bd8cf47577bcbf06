"""Cleaning an answer: reasoning blocks and chat-template tokens go, the rest stays as sent."""

from __future__ import annotations

import pytest

from app.core.summary.answer_clean import CleanAnswer, clean_answer


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("<think>plan</think>\n## A\nx", CleanAnswer("## A\nx")),
        ("<THINKING>\nplan\n</THINKING>\n\n## A", CleanAnswer("## A")),
        ("## A\n<reflection>hm</reflection>\nx", CleanAnswer("## A\n\nx")),
        ("opened by the template\n</think>\n## A", CleanAnswer("## A")),
        ("<think>## A\nx", CleanAnswer("", reasoning_only=True)),
        ("## A\n<think>\nmore", CleanAnswer("", reasoning_only=True)),
        ("<think>only</think>", CleanAnswer("", reasoning_only=True)),
        ("the `<think>` tag is text", CleanAnswer("the `<think>` tag is text")),
        ("<|im_start|>assistant\n## A<|im_end|>\n<|im_start|>user\nok", CleanAnswer("## A")),
        ("<|start_header_id|>assistant<|end_header_id|>\n\n## A<|eot_id|>", CleanAnswer("## A")),
        ("<s>[INST] ## A [/INST]</s>", CleanAnswer("## A")),
        ("<start_of_turn>model\n## A<end_of_turn>", CleanAnswer("## A")),
        ("<|eot_id|>## A", CleanAnswer("## A")),
        (
            "## A\n- `<s>old</s>` became `<del>`\n## B",
            CleanAnswer("## A\n- `<s>old</s>` became `<del>`\n## B"),
        ),
        ("<s>## A</s>\n<s>[INST] again [/INST]", CleanAnswer("## A")),
    ],
)
def test_clean_answer(text: str, cleaned: CleanAnswer) -> None:
    assert clean_answer(text) == cleaned
