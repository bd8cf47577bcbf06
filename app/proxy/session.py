"""What the proxy keeps of one session between its requests: the head its requests carry,
the heads finished in the background and the compactions running, the provider's count
ratio, and its pace; and which of the store's writes it is as of."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from app.core.proxy import Head, Pace


@dataclass
class Session:
    head: Head | None = None
    ready: Head | None = None
    running: asyncio.Task[Head | None] | None = None
    running_from: int = 0  # the messages of the request the running compaction began from
    running_tokens: int = 0  # ... and its count (the last one begun: the `ready` head's)
    # A head kept ready by the extractive summarizer (`spare` makes it) beside the
    # configured summarizer's (`ready`, `running`), for a turn larger than the session's
    # largest (`Forecast.surprise`): put in over the limit only while the configured
    # summarizer's compaction runs. `spare_from`: the messages of the request the last
    # standby began from.
    standby: Head | None = None
    # Beside a standby that summarizes the pinned messages or the previous head again
    # (`Head.unpinned`: they left no room for that turn), one that keeps them as sent and
    # summarizes only the turns since: tried first, it goes in when the turn that came fits
    # with it, and the request after it reads them from the provider's cache.
    kept_standby: Head | None = None
    spare: asyncio.Task[Head | None] | None = None
    spare_from: int = 0
    ratio: float | None = None
    made: int = 0  # the tokens the session's last compaction wrote (its new summary turns)
    # After a head is put in, no compaction starts in the background below this count: a
    # head and kept part that together stay above the start mark would otherwise start
    # the next compaction at once, turn after turn.
    quiet_below: int = 0
    pace: Pace = field(default_factory=Pace)
    # Heads made whose archive is kept until they are put in or let go, when followed
    # (app/proxy/discards.py).
    unsettled: list[Head] | None = None
    # The store's write this copy is as of, and the write that put `head` in
    # (`app.proxy.shared`): a later one in the store is read before the next request.
    version: int = 0
    head_version: int = 0

    def newer(self, head: Head) -> bool:
        """Whether `head` stands for more of the history than the head requests carry."""
        return _newer(head, self.head)

    def offer(self, head: Head, standby: bool) -> None:
        """A head finished in the background, kept when it stands for more than the head
        requests carry and the one of its kind kept already. One begun from a head since
        replaced is a head of its own (the messages it stands for are the client's, the
        older head at its start as in the client's history): it serves as well."""
        if self.unsettled is not None:
            self.unsettled.append(head)
        if not self.newer(head):
            return
        if standby and _newer(head, self.standby):
            self.standby = head
        elif not standby and _newer(head, self.ready):
            self.ready = head

    def offer_kept(self, head: Head) -> None:
        """A standby that keeps the pinned messages or the previous head (`kept_standby`),
        kept as `offer` keeps one."""
        if self.unsettled is not None:
            self.unsettled.append(head)
        if self.newer(head) and _newer(head, self.kept_standby):
            self.kept_standby = head

    def candidates(self, over: bool) -> list[Head | None]:
        """The finished heads a request may put in, the first that fits chosen: the
        configured summarizer's, then the standbys, the one keeping the most as sent first.
        A standby goes in below the limit only when no compaction by the configured
        summarizer runs (it may yet be ready in time), and never when it summarizes the
        pinned messages or kept ones beside such a one: that pair is for a turn over it."""
        if over:
            return [self.ready, self.kept_standby, self.standby]
        spare = self.standby
        quiet = self.running is None and spare is not None and not spare.unpinned
        return [self.ready, spare] if quiet else [self.ready]

    def tasks(self) -> list[asyncio.Task[Head | None]]:
        """Its compactions running in the background."""
        return [task for task in (self.running, self.spare) if task is not None]

    def began(self, task: asyncio.Task[Head | None], standby: bool, messages: int) -> None:
        """A compaction begun in the background from a request of `messages` messages."""
        if standby:
            self.spare, self.spare_from = task, messages
        else:
            self.running, self.running_from = task, messages

    def finished(self, task: asyncio.Task[Head | None], standby: bool) -> None:
        """A background compaction ended: its head, if it made one, offered."""
        if self.running is task:
            self.running = None
        if self.spare is task:
            self.spare = None
        if task.cancelled() or task.exception() is not None:
            return
        head = task.result()
        if head is not None:
            self.offer(head, standby)

    def drop_older(self) -> None:
        """After a head is put in: the finished heads and running compactions that could
        stand for no more than it are dropped."""
        head = self.head
        if head is None:
            return
        if self.ready is not None and not _newer(self.ready, head):
            self.ready = None
        if self.standby is not None and not _newer(self.standby, head):
            self.standby = None
        if self.kept_standby is not None and not _newer(self.kept_standby, head):
            self.kept_standby = None
        if self.running is not None and self.running_from <= head.replaced:
            self.running.cancel()
            self.running = None
        if self.spare is not None and self.spare_from <= head.replaced:
            self.spare.cancel()
            self.spare = None


def _newer(head: Head, than: Head | None) -> bool:
    return than is None or head.replaced > than.replaced
