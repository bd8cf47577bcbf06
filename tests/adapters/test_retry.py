from __future__ import annotations

from time import monotonic

import anyio
import pytest

from app.adapters.retry import RetryingSummarizer, RetryPolicy
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.core.request_context import deadline_at

pytestmark = pytest.mark.anyio

REQUEST = SummaryRequest(messages=(), system="sys", prompt="summarize", max_words=100)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class ScriptedSummarizer:
    """Answers each call with the next outcome: a string is returned, an error raised."""

    def __init__(self, *outcomes: str | Exception) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0
        self.closed = False

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def reads_prompt(self) -> bool:
        return True

    async def summarize(self, request: SummaryRequest) -> str:
        outcome = self.outcomes[self.calls]
        self.calls += 1
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def aclose(self) -> None:
        self.closed = True


class FakeTime:
    """A clock that only moves when the code under test sleeps (or a call takes time)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def retryable(retry_after: float | None = None) -> SummarizerError:
    return SummarizerError("boom", retryable=True, retry_after=retry_after)


def retrying(
    inner: ScriptedSummarizer,
    time: FakeTime,
    *,
    attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 8.0,
    deadline: float = 120.0,
) -> RetryingSummarizer:
    """The summarizer under test, on fake time, with jitter fixed at its maximum."""
    return RetryingSummarizer(
        inner,
        RetryPolicy(
            attempts=attempts, base_delay=base_delay, max_delay=max_delay, deadline=deadline
        ),
        sleep=time.sleep,
        clock=time.clock,
        jitter=lambda: 1.0,
    )


async def test_success_on_first_try_does_not_sleep() -> None:
    inner, time = ScriptedSummarizer("summary"), FakeTime()

    assert await retrying(inner, time).summarize(REQUEST) == "summary"

    assert inner.calls == 1
    assert time.sleeps == []


async def test_retryable_error_is_retried_after_base_delay() -> None:
    inner, time = ScriptedSummarizer(retryable(), "summary"), FakeTime()

    assert await retrying(inner, time, base_delay=0.5).summarize(REQUEST) == "summary"

    assert inner.calls == 2
    assert time.sleeps == [0.5]


async def test_delays_double_and_are_capped_at_max_delay() -> None:
    inner = ScriptedSummarizer(retryable(), retryable(), retryable(), "summary")
    time = FakeTime()
    summarizer = retrying(inner, time, attempts=4, base_delay=1.0, max_delay=3.0)

    assert await summarizer.summarize(REQUEST) == "summary"

    assert time.sleeps == [1.0, 2.0, 3.0]


async def test_jitter_scales_the_delay_between_half_and_full() -> None:
    inner, time = ScriptedSummarizer(retryable(), "summary"), FakeTime()
    summarizer = RetryingSummarizer(
        inner, RetryPolicy(base_delay=2.0), sleep=time.sleep, clock=time.clock, jitter=lambda: 0.0
    )

    await summarizer.summarize(REQUEST)

    assert time.sleeps == [1.0]


async def test_retry_after_is_honoured_instead_of_backoff() -> None:
    inner, time = ScriptedSummarizer(retryable(retry_after=2.5), "summary"), FakeTime()

    assert await retrying(inner, time, base_delay=0.5).summarize(REQUEST) == "summary"

    assert time.sleeps == [2.5]


async def test_retry_after_is_capped_at_max_delay() -> None:
    inner, time = ScriptedSummarizer(retryable(retry_after=600.0), "summary"), FakeTime()

    assert await retrying(inner, time, max_delay=8.0).summarize(REQUEST) == "summary"

    assert time.sleeps == [8.0]


async def test_non_retryable_error_is_raised_at_once_unchanged() -> None:
    error = SummarizerError("bad request", retryable=False)
    inner, time = ScriptedSummarizer(error, "summary"), FakeTime()

    with pytest.raises(SummarizerError) as caught:
        await retrying(inner, time).summarize(REQUEST)

    assert caught.value is error
    assert str(caught.value) == "bad request"
    assert inner.calls == 1
    assert time.sleeps == []


async def test_other_exceptions_are_not_retried() -> None:
    inner, time = ScriptedSummarizer(RuntimeError("bug"), "summary"), FakeTime()

    with pytest.raises(RuntimeError, match="bug"):
        await retrying(inner, time).summarize(REQUEST)

    assert inner.calls == 1


async def test_when_all_attempts_fail_the_last_error_says_how_many() -> None:
    class OverloadedError(SummarizerError):
        pass

    last = OverloadedError("overloaded", retryable=True, retry_after=1.0)
    inner = ScriptedSummarizer(retryable(), retryable(), last, "never reached")
    time = FakeTime()

    with pytest.raises(OverloadedError) as caught:
        await retrying(inner, time, attempts=3, base_delay=0.5).summarize(REQUEST)

    assert caught.value is last
    assert str(caught.value) == "overloaded after 3 attempts"
    assert caught.value.retryable is True
    assert caught.value.retry_after == 1.0
    assert inner.calls == 3
    assert time.sleeps == [0.5, 1.0]


async def test_a_single_attempt_never_retries() -> None:
    inner, time = ScriptedSummarizer(retryable(), "summary"), FakeTime()

    with pytest.raises(SummarizerError, match=r"^boom after 1 attempt$"):
        await retrying(inner, time, attempts=1).summarize(REQUEST)

    assert inner.calls == 1
    assert time.sleeps == []


async def test_deadline_stops_before_a_wait_that_would_cross_it() -> None:
    inner = ScriptedSummarizer(retryable(retry_after=4.0), retryable(retry_after=4.0), "summary")
    time = FakeTime()
    summarizer = retrying(inner, time, attempts=5, deadline=6.0)

    with pytest.raises(SummarizerError) as caught:
        await summarizer.summarize(REQUEST)

    assert str(caught.value) == "boom after 2 attempts (retry deadline 6s)"
    assert inner.calls == 2
    assert time.sleeps == [4.0]


async def test_deadline_counts_the_time_spent_in_calls() -> None:
    time = FakeTime()

    class SlowFailing(ScriptedSummarizer):
        async def summarize(self, request: SummaryRequest) -> str:
            time.now += 50.0
            return await super().summarize(request)

    inner = SlowFailing(retryable(), retryable(), "summary")
    summarizer = retrying(inner, time, attempts=3, base_delay=1.0, deadline=60.0)

    with pytest.raises(SummarizerError, match="after 2 attempts"):
        await summarizer.summarize(REQUEST)

    assert time.sleeps == [1.0]


async def test_name_is_the_inner_name_and_aclose_reaches_it() -> None:
    inner = ScriptedSummarizer()
    summarizer = retrying(inner, FakeTime())

    await summarizer.aclose()

    assert summarizer.name == "scripted"
    assert inner.closed


async def test_reads_prompt_is_the_inner_ones() -> None:
    class MessagesReader(ScriptedSummarizer):
        @property
        def reads_prompt(self) -> bool:
            return False

    assert RetryingSummarizer(MessagesReader()).reads_prompt is False


def test_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryingSummarizer(ScriptedSummarizer(), RetryPolicy(attempts=0))


class SlowThenFast:
    """Takes `slow` real seconds on its first call, answers at once afterwards."""

    def __init__(self, slow: float) -> None:
        self.slow = slow
        self.calls = 0

    @property
    def name(self) -> str:
        return "slow"

    async def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        if self.calls == 1:
            await anyio.sleep(self.slow)
        return "## Goals\nok"


async def test_an_attempt_past_its_timeout_is_cut_and_retried() -> None:
    inner = SlowThenFast(slow=5.0)
    summarizer = RetryingSummarizer(
        inner, RetryPolicy(attempt_timeout=0.05, base_delay=0.01, deadline=5.0)
    )
    assert await summarizer.summarize(REQUEST) == "## Goals\nok"
    assert inner.calls == 2


async def test_a_call_past_the_deadline_is_cut_and_not_retried() -> None:
    inner = SlowThenFast(slow=5.0)
    summarizer = RetryingSummarizer(inner, RetryPolicy(attempt_timeout=1.0, deadline=0.05))
    with pytest.raises(SummarizerError) as info:
        await summarizer.summarize(REQUEST)
    error = info.value
    assert (error.reason, error.retryable, inner.calls) == ("deadline", False, 1)
    assert str(error) == (
        "[deadline] summary deadline of 0.05s passed (COMPACT_SUMMARY_DEADLINE) after 1 attempt"
    )


async def test_without_an_attempt_timeout_the_deadline_bounds_the_call() -> None:
    inner = SlowThenFast(slow=5.0)
    summarizer = RetryingSummarizer(inner, RetryPolicy(deadline=0.05))
    with pytest.raises(SummarizerError, match=r"^\[deadline\]"):
        await summarizer.summarize(REQUEST)


async def test_a_call_ends_at_the_deadline_of_the_request_it_serves() -> None:
    """Inside a request (or job) the loop ends by its deadline, the summary's own bounds
    notwithstanding, so the service answers with its defined outcome instead of a 504."""
    inner = SlowThenFast(slow=5.0)
    summarizer = RetryingSummarizer(inner, RetryPolicy(attempt_timeout=30.0, deadline=60.0))
    started = monotonic()
    with deadline_at(monotonic() + 0.1), pytest.raises(SummarizerError) as info:
        await summarizer.summarize(REQUEST)
    error = info.value
    assert (error.reason, error.retryable, inner.calls) == ("deadline", False, 1)
    assert str(error) == (
        "[deadline] summary cut at the deadline of its request or job (COMPACT_REQUEST_TIMEOUT)"
        " after 1 attempt"
    )
    assert monotonic() - started < 0.5


async def test_no_retry_is_waited_for_past_the_deadline_of_the_request() -> None:
    inner = ScriptedSummarizer(retryable(), "never")
    summarizer = RetryingSummarizer(
        inner, RetryPolicy(base_delay=1.0, deadline=60.0), jitter=lambda: 1.0
    )
    with deadline_at(monotonic() + 0.1), pytest.raises(SummarizerError) as info:
        await summarizer.summarize(REQUEST)
    assert inner.calls == 1
    assert str(info.value) == (
        "boom after 1 attempt (deadline of the request or job, COMPACT_REQUEST_TIMEOUT)"
    )
