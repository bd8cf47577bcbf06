"""The messages an agent rebuilds for every request, told from its history, and put back
where it sent them around a compacted head."""

from __future__ import annotations

from typing import Any

from app.core.proxy import make_head
from app.core.proxy.live import live_indices, split
from tests.proxy.agents import (
    AIDER_REMINDER,
    FILES_REPLY,
    READ_ONLY_REPLY,
    REPO_PREFIX,
    REPO_REPLY,
    aider_ask,
    aider_files,
    aider_request,
    aider_turn,
)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def test_aider_s_rebuilt_pairs_and_reminder_are_live_its_history_is_not() -> None:
    messages = aider_request(
        aider_turn(1, 2), [aider_ask(2)], {"a.py": "x = 1\n"}, "\na.py:\n│x\n", "Use tabs.\n"
    )
    live = [messages[i] for i in live_indices(messages)]
    replies = [m["content"] for m in live if m["role"] == "assistant"]
    assert replies == [READ_ONLY_REPLY, REPO_REPLY, FILES_REPLY]
    assert live[-1] == {"role": "system", "content": AIDER_REMINDER}
    assert split(messages).history == [messages[0], *aider_turn(1, 2), aider_ask(2)]


def test_aider_s_other_coders_and_its_examples_are_live_too() -> None:
    """The ask coder's wording, no files yet, and the example conversation a model that
    reads no examples in its system prompt gets (ending with aider's switch notice)."""
    messages = [
        {"role": "system", "content": "Act as an expert code analyst."},
        _user("Change get_factorial() to use math.factorial"),
        _assistant("To make this change we need to modify `mathweb/flask/app.py`."),
        _user(
            "I switched to a new code base. Please don't consider the above files"
            " or try to edit them any longer."
        ),
        _assistant("Ok."),
        _user(
            "I am working with you on code in a git repository.\nHere are summaries of"
            " some files present in my git repo.\n\na.py:\n│x\n"
        ),
        _assistant(REPO_REPLY),
        _user("I am not sharing the full contents of any files with you yet."),
        _assistant("Ok."),
        _user(
            [
                {"type": "text", "text": "Image file: shot.png"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            ]
        ),
        _assistant("Ok, I will use these images as references."),
        _user("What does a.py do?"),
    ]
    assert live_indices(messages) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def test_a_user_message_like_aider_s_without_its_reply_is_history() -> None:
    messages = [_user("I am not sharing any files yet. Guess."), _assistant("A guess.")]
    assert live_indices(messages) == []
    assert split(messages).live == ()


def test_live_messages_go_back_before_the_history_they_preceded() -> None:
    """Before the pinned messages: where they were; before a replaced one: right after
    the head; before a kept one: before it."""
    h = [_user(f"h{i}") if i % 2 == 0 else _assistant(f"h{i}") for i in range(8)]
    repo = [_user(REPO_PREFIX + "\na.py:\n"), _assistant(REPO_REPLY)]
    files = [_user(aider_files({"a.py": "x = 1\n"})), _assistant(FILES_REPLY)]
    reminder = {"role": "system", "content": AIDER_REMINDER}
    messages = [*repo, *h[:4], *files, *h[4:6], reminder, *h[6:]]
    parts = split(messages)
    assert parts.history == h
    assert [a for a, _ in parts.live] == [0, 0, 4, 4, 6]
    assert parts.restore(h, None) == messages
    summary = [_user("summary"), _assistant("ack")]
    head = make_head([*h[:2], *summary], h, 6, 10, pinned=2)
    sent = head.splice(h)
    assert sent is not None
    assert parts.restore(sent, head) == [*repo, *h[:2], *summary, *files, reminder, *h[6:]]


def test_the_examples_notice_after_aider_s_pairs_leaves_the_history_before_it_alone() -> None:
    notice = (
        "I switched to a new code base. Please don't consider the above files or try to"
        " edit them any longer."
    )
    messages = [
        _user(REPO_PREFIX + "\na.py:\n"),
        _assistant(REPO_REPLY),
        _user("Fix a.py."),
        _assistant("Done."),
        _user(notice),
        _assistant("Ok."),
    ]
    assert live_indices(messages) == [0, 1]
