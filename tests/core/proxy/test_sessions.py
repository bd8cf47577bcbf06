from __future__ import annotations

from app.core.proxy.sessions import credential_of, scoped_session_id, session_key
from app.core.sessions import is_valid_id

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
    assert session_key({"x-claude-code-session-id": "cc"}, body) == "x-claude-code-session-id:cc"
    assert session_key({"session-id": "codex"}, body) == "session-id:codex"
    assert session_key({"session_id": "codex"}, body) == "session_id:codex"
    assert session_key({}, body) == "user_id:u"
    assert session_key({}, {**BODY, "prompt_cache_key": "k"}) == "prompt_cache_key:k"


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
