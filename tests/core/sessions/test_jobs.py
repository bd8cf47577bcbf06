from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.core.sessions.jobs import (
    SEAM_USER_MESSAGE,
    Job,
    first_difference,
    is_abandoned,
    is_expired,
    job_from_json,
    job_to_json,
    message_hashes,
    message_sha256,
    seam_violations,
    swap_prefix,
)
from tests.builders import assistant, system, user

SENT: list[dict[str, Any]] = [system("s"), user("a"), assistant("b")]
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def job(**changes: Any) -> Job:
    values: dict[str, Any] = {
        "id": "job-1",
        "session_id": "s1",
        "state": "done",
        "format": "anthropic",
        "created_at": T0,
        "sent_count": len(SENT),
        "sent_sha256": "0" * 64,
        "sent_hashes": message_hashes(SENT),
        "finished_at": T0,
        "result": {"compacted": True, "messages": [system("s"), user("SUMMARY"), assistant("ok")]},
    }
    values.update(changes)
    return Job(**values)


def test_message_hash_ignores_key_order() -> None:
    assert message_sha256({"role": "user", "content": "a"}) == message_sha256(
        {"content": "a", "role": "user"}
    )


def test_first_difference_names_the_first_changed_or_missing_message() -> None:
    hashes = message_hashes(SENT)
    assert first_difference(hashes, [*SENT, user("new")]) is None
    assert first_difference(hashes, [SENT[0], user("edited"), SENT[2]]) == 1
    assert first_difference(hashes, SENT[:2]) == 2


def test_swap_prefix_keeps_newer_messages_after_the_result() -> None:
    current = [*SENT, user("next")]
    assert swap_prefix(job(), current) == [
        system("s"),
        user("SUMMARY"),
        assistant("ok"),
        current[3],
    ]


def test_swap_prefix_bridges_a_kept_assistant_message() -> None:
    swapped = swap_prefix(job(), [*SENT, assistant("y")])
    assert swapped[-2:] == [SEAM_USER_MESSAGE, assistant("y")]
    assert seam_violations(swapped, "anthropic") == []


def test_swap_prefix_of_an_uncompacted_result_is_the_current_list() -> None:
    current = [*SENT, user("next")]
    assert swap_prefix(job(result={"compacted": False, "messages": SENT}), current) == current
    assert job(result={"compacted": False, "messages": SENT}).replaces_message_count == 0
    assert job().replaces_message_count == len(SENT)
    assert job(state="running", result=None).replaces_message_count is None


def test_expiry_counts_from_finishing() -> None:
    ttl = timedelta(minutes=5)
    assert not is_expired(job(), T0 + ttl - timedelta(seconds=1), ttl)
    assert is_expired(job(), T0 + ttl, ttl)
    assert not is_expired(job(state="running", finished_at=None), T0 + 2 * ttl, ttl)


def test_a_job_survives_its_json_record() -> None:
    original = job(reason=None, message=None)
    assert job_from_json(job_to_json(original)) == original
    owned = job(state="running", finished_at=None, result=None, owner="a", heartbeat_at=T0)
    assert job_from_json(job_to_json(owned)) == owned


def test_a_job_in_flight_is_abandoned_once_its_lease_ran_out() -> None:
    lease = timedelta(seconds=30)
    running = job(state="running", finished_at=None, result=None, owner="a", heartbeat_at=T0)
    assert not is_abandoned(running, T0 + lease - timedelta(seconds=1), lease)
    assert is_abandoned(running, T0 + lease, lease)
    assert not is_abandoned(job(owner="a", heartbeat_at=T0), T0 + 2 * lease, lease)


def test_a_record_from_before_leases_is_abandoned_at_once() -> None:
    legacy = {**job_to_json(job(state="queued", finished_at=None, result=None))}
    del legacy["owner"], legacy["heartbeat_at"]
    restored = job_from_json(legacy)
    assert (restored.owner, restored.heartbeat_at) == (None, None)
    assert is_abandoned(restored, T0, timedelta(seconds=30))


@pytest.mark.parametrize(
    "change",
    [{"state": "paused"}, {"format": "xml"}, {"sent_hashes": "abc"}, {"result": [1]}],
)
def test_a_record_that_is_not_a_job_is_refused(change: dict[str, Any]) -> None:
    record = {**job_to_json(job()), **change}
    with pytest.raises(ValueError, match=r"."):
        job_from_json(record)


def test_a_record_missing_fields_is_refused() -> None:
    record = job_to_json(job())
    del record["sent_count"]
    with pytest.raises(ValueError, match="not a job record"):
        job_from_json(record)
