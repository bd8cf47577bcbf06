import anyio
import pytest

from app.service.slots import BusyError, SummarySlots

pytestmark = pytest.mark.anyio


async def test_a_free_slot_is_taken_at_once_even_with_no_wait() -> None:
    slots = SummarySlots(2, wait=0)
    async with slots.hold():
        assert slots.in_use == 1
        async with slots.hold():
            assert slots.in_use == 2
    assert slots.in_use == 0


async def test_no_free_slot_and_no_wait_is_busy_at_once() -> None:
    slots = SummarySlots(1, wait=0)
    async with slots.hold():
        with pytest.raises(BusyError) as info:
            async with slots.hold():
                raise AssertionError("never entered")
    assert str(info.value) == "all 1 summary slots are busy (waited 0 s); retry shortly"
    assert slots.in_use == 0


async def test_a_slot_freed_within_the_wait_is_taken() -> None:
    slots = SummarySlots(1, wait=30)
    order: list[str] = []
    holding = anyio.Event()
    release = anyio.Event()

    async def first() -> None:
        async with slots.hold():
            order.append("first")
            holding.set()
            await release.wait()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(first)
        await holding.wait()

        async def free_later() -> None:
            await anyio.sleep(0.01)
            release.set()

        tasks.start_soon(free_later)
        async with slots.hold():
            order.append("second")
    assert order == ["first", "second"]


async def test_the_wait_is_bounded() -> None:
    slots = SummarySlots(1, wait=0.01)
    async with slots.hold():
        with pytest.raises(BusyError, match=r"waited 0.01 s"):
            async with slots.hold():
                raise AssertionError("never entered")


async def test_background_holders_wait_without_bound() -> None:
    slots = SummarySlots(1, wait=0)
    entered: list[str] = []

    async def waiter() -> None:
        async with slots.hold(background=True):
            entered.append("job")

    async with anyio.create_task_group() as tasks, slots.hold():
        tasks.start_soon(waiter)
        await anyio.sleep(0.01)
        assert entered == []
    assert entered == ["job"]


async def test_a_failure_inside_releases_the_slot() -> None:
    slots = SummarySlots(1, wait=0)
    with pytest.raises(RuntimeError):
        async with slots.hold():
            raise RuntimeError("summarizer blew up")
    assert slots.in_use == 0


def test_a_bound_below_one_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        SummarySlots(0, wait=1)
