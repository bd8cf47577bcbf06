from app.core.sessions.ids import is_valid_id
from app.service.clock import time_sortable_id, utc_now


def test_ids_made_one_after_another_sort_in_that_order_and_never_repeat() -> None:
    ids = [time_sortable_id() for _ in range(50)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 50
    assert all(is_valid_id(i) for i in ids)


def test_the_clock_is_timezone_aware_utc() -> None:
    assert utc_now().utcoffset() is not None
    assert utc_now().utcoffset().total_seconds() == 0
