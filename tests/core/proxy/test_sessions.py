from __future__ import annotations

from app.core.proxy.sessions import credential_of, scoped_session_id, session_key
from app.core.sessions import is_valid_id
from tests.proxy.agents import aider_ask, aider_request, aider_turn

SECRET = b"s" * 32
BODY = {
    "system": "You are an agent.",
    "tools": [{"name": "bash"}, {"name": "read"}],
    "messages": [{"role": "user", "content": "Fix the build."}],
}


def test_our_header_wins_over_the_agent_s_own_ids() -> None:
    headers = {"x-compact-session": "mine", "x-claude-code-session-id": "cc", "session_id": "cx"}
    assert session_key(headers, {**BODY, "metadata": {"user_id": "u"}}) == "x-compact-session:mine"


def test_the_agent_s_header_ids_come_before_the_body_s() -> None:
    body = {**BODY, "metadata": {"user_id": "u"}, "prompt_cache_key": "k"}
    keys = [
        session_key({"x-claude-code-session-id": "cc"}, body),
        session_key({"session-id": "codex"}, body),
        session_key({"session_id": "codex"}, body),
        session_key({}, body),
        session_key({}, {**BODY, "prompt_cache_key": "k"}),
    ]
    ids = ["x-claude-code-session-id:cc", "session-id:codex", "session_id:codex", "user_id:u"]
    assert [k.split("/")[0] for k in keys] == [*ids, "prompt_cache_key:k"]


def test_an_agent_s_id_is_one_per_conversation_of_its_run() -> None:
    """Claude Code sends its run's id with its subagents' and side requests: each is a
    conversation of its own, and the main one keeps its key as it grows, as its tools
    change and as its breakpoint moves off the first message."""
    headers = {"x-claude-code-session-id": "run-1"}
    marked = {"type": "text", "text": "Fix the build.", "cache_control": {"type": "ephemeral"}}
    first_turn = {**BODY, "messages": [{"role": "user", "content": [marked]}]}
    later = {
        **BODY,
        "tools": [{"name": "bash"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix the build."}]},
            {"role": "assistant", "content": "On it."},
            {"role": "user", "content": "Go on."},
        ],
    }
    subagent = {
        "system": "You are a search subagent.",
        "messages": [{"role": "user", "content": "Find the build config."}],
    }
    title = {**BODY, "messages": [{"role": "user", "content": "Write a title for: Fix it."}]}
    main = session_key(headers, first_turn)
    assert session_key(headers, later) == main
    assert len({main, session_key(headers, subagent), session_key(headers, title)}) == 3
    assert session_key({"x-claude-code-session-id": "run-2"}, later) != main


def test_a_moved_breakpoint_leaves_the_start_s_key_as_it_was() -> None:
    marked = {"type": "text", "text": "Fix the build.", "cache_control": {"type": "ephemeral"}}
    first_turn = {**BODY, "messages": [{"role": "user", "content": [marked]}]}
    plain = {
        **BODY,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Fix the build."}]}],
    }
    assert session_key({}, first_turn) == session_key({}, plain)


def test_a_first_message_marked_as_a_block_is_the_string_it_is_sent_as_later() -> None:
    """An SDK user marks the latest message by wrapping its text in a block: on the first
    turn that is the first user message, sent as a plain string on every later turn."""
    marked = {"type": "text", "text": "Fix the build.", "cache_control": {"type": "ephemeral"}}
    first_turn = {**BODY, "messages": [{"role": "user", "content": [marked]}]}
    later = {
        **BODY,
        "messages": [
            {"role": "user", "content": "Fix the build."},
            {"role": "assistant", "content": "On it."},
            {"role": "user", "content": [{**marked, "text": "Go on."}]},
        ],
    }
    assert session_key({}, first_turn) == session_key({}, later)
    agent = {"x-claude-code-session-id": "run-1"}
    assert session_key(agent, first_turn) == session_key(agent, later)


def test_without_an_id_the_session_is_its_invariant_start() -> None:
    later = {**BODY, "messages": [*BODY["messages"], {"role": "assistant", "content": "On it."}]}
    assert session_key({}, later) == session_key({}, BODY)
    other_task = {**BODY, "messages": [{"role": "user", "content": "Write docs."}]}
    assert session_key({}, other_task) != session_key({}, BODY)
    other_tools = {**BODY, "tools": [{"name": "bash"}]}
    assert session_key({}, other_tools) != session_key({}, BODY)


def test_the_openai_shape_s_system_messages_and_tools_make_its_start() -> None:
    chat = {
        "tools": [{"type": "function", "function": {"name": "bash"}}],
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "Fix it."},
        ],
    }
    renamed = {**chat, "tools": [{"type": "function", "function": {"name": "shell"}}]}
    assert session_key({}, chat).startswith("start:")
    assert session_key({}, chat) != session_key({}, renamed)


def test_sessions_of_different_credentials_never_share_an_id() -> None:
    key = session_key({"x-claude-code-session-id": "same"}, BODY)
    one = scoped_session_id(SECRET, credential_of({"x-api-key": "sk-ant-one"}), key)
    two = scoped_session_id(SECRET, credential_of({"x-api-key": "sk-ant-two"}), key)
    bearer = scoped_session_id(SECRET, credential_of({"authorization": "Bearer sk-one"}), key)
    assert len({one, two, bearer}) == 3
    assert one == scoped_session_id(SECRET, credential_of({"x-api-key": "sk-ant-one"}), key)


def test_a_scoped_id_is_a_valid_id_that_holds_no_part_of_the_credential() -> None:
    credential = "sk-ant-api03-CANARY-0123456789"
    session = scoped_session_id(SECRET, credential_of({"x-api-key": credential}), "k")
    assert is_valid_id(session)
    assert "CANARY" not in session
    assert "sk-ant" not in session
    assert scoped_session_id(b"another process", credential, "k") != session


def test_aider_s_requests_are_one_session_whatever_it_rebuilds() -> None:
    """aider rebuilds its repository map and files message for every request, and they
    come before its history: the session is keyed by the history's first request."""
    first = aider_request([], [aider_ask(1)], {"a.py": "x = 1\n"}, "\na.py:\n│x\n")
    second = aider_request(
        aider_turn(1, 2), [aider_ask(2)], {"a.py": "x = 2\n"}, "\na.py:\n│x\nb.py:\n│y\n"
    )
    other = aider_request([], [{"role": "user", "content": "Write the docs."}], {}, "\nb.py:\n")
    keys = [session_key({}, {"messages": m}) for m in (first, second, other)]
    assert keys[0] == keys[1] != keys[2]


def test_a_request_with_the_system_prompt_s_end_appended_keys_as_typed() -> None:
    """aider, for a model its settings do not name, appends its edit-format reminder (also
    the end of its system prompt) to the request it sends; its history keeps the request as
    typed: the first turn is the session of the turns after it."""
    reminder = (
        "# *SEARCH/REPLACE block* Rules:\n\n"
        "Every *SEARCH/REPLACE block* must use this format:\n"
        "1. The *FULL* file path alone on a line, verbatim.\n"
    )
    system = {"role": "system", "content": "Act as an expert software developer.\n" + reminder}
    first = [system, {"role": "user", "content": "Add a --verbose flag.\n\n" + reminder}]
    later = [
        system,
        {"role": "user", "content": "Add a --verbose flag."},
        {"role": "assistant", "content": "Done: cli.py takes --verbose."},
        {"role": "user", "content": "Now document it.\n\n" + reminder},
    ]
    assert session_key({}, {"messages": first}) == session_key({}, {"messages": later})
    other = [system, {"role": "user", "content": "Remove the flag.\n\n" + reminder}]
    assert session_key({}, {"messages": other}) != session_key({}, {"messages": later})


def test_a_user_s_own_closing_words_stay_in_the_key() -> None:
    system = {"role": "system", "content": "You are a helpful assistant. Thanks!"}
    asked = {"role": "user", "content": "Fix the parser.\n\nThanks!"}
    plain = {"role": "user", "content": "Fix the parser."}
    assert session_key({}, {"messages": [system, asked]}) != session_key(
        {}, {"messages": [system, plain]}
    )
