"""What the proxy does to a request on its way: the session's compacted head put in, a
compaction begun in the background, a finished one put in, or one made at once.

Per session (`Session`, the least recently used forgotten past `max_sessions`, shared by
replicas through `app.proxy.shared`): the head its requests carry, the same bytes each time.

A session's first compaction keeps its first messages as sent (up to `pin_share` of the
limit, less when its turns need the room): a prefix the provider has cached. A compaction
replaces the messages from the current head (or after those pinned ones) to a cut, keeping
at least the last `min_keep_share` of the limit as sent; a later one keeps the head it had
and summarizes only what came after it, until the head itself passes `fold_share` of the
limit: then its summaries and what came after it up to the cut are summarized together
(the pinned messages too when a request made at once, or a standby, cannot fit with
them): a fold merges summaries, it never reads the turns they stand for again. The
service compacts (archive first, the ledger, restored files): the configured summarizer in
the background, the extractive one when the request cannot wait, and in the background
too for a standby: a head kept ready for a turn twice as large as the session's largest
(one that summarizes the pinned messages or the head again has one beside it that keeps
them, for a large turn that fits with them, whose first request reads them cached)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import replace

from app.core.model_table import ModelSpec
from app.core.ports import Tokenizer
from app.core.proxy import (
    Head,
    JsonDict,
    Usage,
    carried,
    choose_cut,
    make_head,
    message_breakpoints,
    split,
    standing,
    with_breakpoint,
    within_four,
    without_breakpoints,
)
from app.proxy.counted import Count, each, message_counts, request_count, since
from app.proxy.exchange import Action, Exchange, Planned, ProxyPolicy
from app.proxy.forecast import Forecast
from app.proxy.history import history_of, restored
from app.proxy.parts import compacted_part, joined_part, leading_system
from app.proxy.shared import ProxySessionStore, Session, Shared, in_step
from app.service.compaction import CompactionService
from app.service.summary_cost import metering

log = logging.getLogger("context_compact.proxy")


class ProxyCompactor:
    def __init__(
        self,
        background: CompactionService,
        immediate: CompactionService,
        policy: ProxyPolicy | None = None,
        store: ProxySessionStore | None = None,
    ) -> None:
        self.background, self.immediate = background, immediate
        self.policy = policy or ProxyPolicy()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self.shared = Shared(store, self.policy.max_sessions)

    def _session(self, session_id: str) -> Session:
        session = self._sessions.pop(session_id, None) or Session()
        self._sessions[session_id] = session
        while len(self._sessions) > self.policy.max_sessions:
            _, old = self._sessions.popitem(last=False)
            for task in old.tasks():
                task.cancel()
        return session

    def head_for(self, ex: Exchange) -> list[JsonDict] | None:
        """The session's head put into `ex`'s messages (a token count's body), if it has
        one, its breakpoint as on the requests it goes into."""
        parts = split(ex.messages)
        ex, head = history_of(ex, parts), self._head(ex.session_id)
        spliced = head.splice(ex.messages) if head else None
        return (
            None if spliced is None else parts.restore(self._within_breakpoints(ex, spliced), head)
        )

    @in_step
    async def plan(self, ex: Exchange) -> Planned:
        """What to send for `ex`: its history as planned, its live messages put back."""
        parts = split(ex.messages)
        planned = await self._plan(history_of(ex, parts))
        return restored(parts, planned, self._head(ex.session_id))

    @in_step
    async def retry(self, ex: Exchange, sent: list[JsonDict], limit: int | None) -> Planned | None:
        """After the provider said the context was too long: the request compacted at once
        within `limit` (None: below what `sent` counts), or None if that sends no fewer."""
        parts = split(ex.messages)
        planned = await self._retry(history_of(ex, parts), split(sent).history, limit)
        return None if planned is None else restored(parts, planned, self._head(ex.session_id))

    def _head(self, session_id: str) -> Head | None:
        session = self._sessions.get(session_id)
        return session.head if session else None

    def observe(self, session_id: str, usage: Usage, counted: int) -> None:
        """The provider's count of a request whose own count was `counted`."""
        session = self._sessions.get(session_id)
        if session is not None and counted > 0 and usage.input_tokens > 0:
            session.ratio = min(3.0, max(0.5, usage.input_tokens / counted))
            self.shared.save(session_id, session)

    async def _plan(self, ex: Exchange) -> Planned:
        session = self._session(ex.session_id)
        session.pace.seen(ex.size, time.monotonic())
        client = ex.messages
        sent, reason = client, None
        action: Action = "none"
        if session.head is not None:
            spliced = session.head.splice(client)
            if spliced is None:  # the agent rewrote what the head stands for
                session.head = session.ready = session.standby = None
                reason = "history_changed"
            else:
                sent, action = spliced, "applied"
        forecast = self._forecast(ex, session)
        pending = session.ready is not None or session.standby is not None
        if not pending and forecast.surely_below(ex.size):
            return Planned(ex.session_id, sent, action, reason, None, None, 0)
        count = await self._count(ex, sent)
        before = forecast.judged(count.raw)
        head = session.head if sent is not client else None  # `before`: the agent's count
        agent = forecast.judged(head.unspliced(count.raw, count.messages) if head else count.raw)
        now = forecast.stage(before)
        changed = False  # a head put in by this request
        if now == "over" or now == "splice" or forecast.foreseen(before, turns=1):
            over = now == "over"
            options = session.candidates(over)
            chosen = await self._chosen(ex, forecast, client, each(options), over)
            if chosen is not None and not forecast.worth(now, count.raw, chosen[2].raw):
                # One not worth a cache break (begun long ago, it keeps too much): the next.
                others = [o for o in options if o is not chosen[0]]
                chosen = await self._chosen(ex, forecast, client, each(others), over)
            if chosen is not None and forecast.worth(now, count.raw, chosen[2].raw):
                session.head, sent, count = chosen
                action, changed = "applied", True
                now = forecast.stage(forecast.judged(count.raw))
        if now == "over":
            counted = count if sent is client else None
            made = await self._made_now(ex, session, client, counted, await self._wait(session))
            if made is not None and made[2].raw < count.raw:
                session.head, sent, count = made
                action, changed = "compacted", True
            else:
                reason = reason or "nothing_to_compact"
        if changed:
            session.drop_older()
        # The pause after a head holds below the splice mark only: a request still above
        # it after a head went in is one the next turns take over the limit. A request
        # that put a head in is judged by what it sends: still past the start mark (a
        # large turn was kept), or there and foreseen over, the next compaction begins
        # now, from this head, so that the next request need not wait for one.
        splice = self.policy.marks.splice * ex.limit
        quiet = not changed and before < min(session.quiet_below, splice)
        after = forecast.judged(count.raw)
        # Not while a finished head serves as well as one begun now would: it goes in at the
        # splice mark, and one begun now would be paid for again.
        begins = session.running is None and not quiet and forecast.starts(after)
        if begins and not await self._serves(ex, session, after):
            self._start(ex, session, client)
            session.running_tokens = after
            action = "precompact_started" if action == "none" else action
        # A standby, for a turn larger than the session's largest.
        grown = forecast.judged(since(count, len(client) - session.spare_from))
        stale = session.standby is None or grown > self.policy.quiet_share * ex.limit
        if forecast.at_risk(after) and stale and session.spare is None and not quiet:
            self._start(ex, session, client, standby=True)
            action = "precompact_started" if action == "none" else action
        sent = self._within_breakpoints(ex, sent)
        if action in ("applied", "compacted") and after < before:
            session.quiet_below = after + int(self.policy.quiet_share * ex.limit)
        cost = session.head.cost if changed and session.head is not None else None
        return Planned(ex.session_id, sent, action, reason, agent, after, count.raw, cost)

    async def _retry(self, ex: Exchange, sent: list[JsonDict], limit: int | None) -> Planned | None:
        session, before = self._session(ex.session_id), await self._count(ex, sent)
        limit = self._forecast(ex, session).judged(before.raw) - 1 if limit is None else limit
        tight = replace(ex, limit=max(1, min(ex.limit, limit)))
        made = await self._made_now(tight, session, ex.messages, None)
        if made is None:
            return None
        head, spliced, count = made
        if count.raw >= before.raw:
            return None
        session.head = head
        session.drop_older()
        tokens = self._forecast(ex, session).judged(count.raw)
        sent = self._within_breakpoints(ex, spliced)
        return Planned(ex.session_id, sent, "retried", None, tokens, tokens, count.raw, head.cost)

    async def aclose(self) -> None:
        """Lets the background compactions finish for up to the policy's wait, then cancels
        the rest: a compaction's archive is written in a worker thread, which a cancelled
        task leaves running (the next start sweeps what it left half-written)."""
        tasks = [t for s in self._sessions.values() for t in s.tasks()]
        if tasks:
            await asyncio.wait(tasks, timeout=self.policy.wait_seconds)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        await self.shared.aclose(self.policy.wait_seconds)

    # counting --------------------------------------------------------------------------

    def _tokenizer(self, spec: ModelSpec) -> Tokenizer:
        o200k = self.background.o200k
        return (
            o200k if spec.tokenizer == "o200k" and o200k is not None else self.background.tokenizer
        )

    async def _count(self, ex: Exchange, messages: Sequence[JsonDict]) -> Count:
        """Our count of the request with `messages` (`app.proxy.counted`)."""
        return await request_count(self._tokenizer(ex.spec), ex, messages)

    def _forecast(self, ex: Exchange, session: Session | None) -> Forecast:
        if session is None:
            return Forecast.of(self.policy, ex, None)
        return Forecast.of(self.policy, ex, session.ratio, session.pace)

    # compacting ------------------------------------------------------------------------

    def _start(
        self, ex: Exchange, session: Session, client: list[JsonDict], standby: bool = False
    ) -> None:
        """A compaction of `client` begun in the background: by the configured summarizer,
        or for a standby (`Session`) by the extractive one."""
        base = session.head

        async def run() -> Head | None:
            began = time.monotonic()
            try:
                if standby:
                    return await self._standby(ex, session, client, base)
                head = await self._compact(self.background, ex, client, base, None, later=True)
            except Exception:
                log.exception("background compaction failed", extra={"session": ex.session_id})
                return None
            # The configured summarizer's time: the turns a compaction takes.
            session.pace.compaction_seconds = time.monotonic() - began
            return head

        task = asyncio.create_task(run())
        task.add_done_callback(lambda done: session.finished(done, standby))
        session.began(task, standby, len(client))

    async def _standby(
        self, ex: Exchange, session: Session, client: list[JsonDict], base: Head | None
    ) -> Head | None:
        """A standby for `client` keeping the pinned messages or `base` as sent; when with
        them its turn would not fit (`Forecast.crowded`), one that summarizes them too, the
        kept one beside it for a large turn that fits with them (`Session.kept_standby`)."""
        summary = session.made or int(self.policy.head_share * ex.limit)  # its guess
        counted, immediate = await self._count(ex, client), self.immediate
        kept = await self._compact(immediate, ex, client, base, counted, later=True, spare=True)
        if kept is not None:
            lead = leading_system(client) if ex.format != "anthropic" else 0
            pinned = counted.messages[lead : kept.pinned]
            if not self._forecast(ex, session).crowded_by(pinned, base, counted.fixed, summary):
                return kept
            session.offer_kept(kept)
        return await self._compact(
            immediate, ex, client, base, counted, squeeze=True, later=True, spare=True
        )

    async def _chosen(
        self,
        ex: Exchange,
        forecast: Forecast,
        client: list[JsonDict],
        options: AsyncIterable[Head | None],
        snug: bool = False,
    ) -> tuple[Head, list[JsonDict], Count] | None:
        """The first of `options` that brings the request within the limit (`snug`, one
        over it: below the splice mark first; past it the next turns need a head at once,
        near the limit), the later ones not even made, else the one that sends the least,
        with the messages it gives and their count; None when none is for this history."""
        best = within = None
        async for head in options:
            spliced = head.splice(client) if head is not None else None
            if head is None or spliced is None:
                continue
            count = await self._count(ex, spliced)
            tokens = forecast.judged(count.raw)
            if tokens <= (self.policy.marks.splice * ex.limit if snug else ex.limit):
                return head, spliced, count
            if within is None and tokens <= ex.limit:
                within = (head, spliced, count)
            if best is None or count.raw < best[2].raw:
                best = (head, spliced, count)
        return within or best

    async def _serves(self, ex: Exchange, session: Session, tokens: int) -> bool:
        """Whether the session's finished head serves as well as one begun now from this
        request (of `tokens`, as sent) would: with it, the request grown as much as one
        begun now is made for would begin none."""
        spliced = session.ready.splice(ex.messages) if session.ready is not None else None
        if spliced is None or session.running_tokens < self.policy.marks.start * ex.limit:
            return False  # none, or begun below the start mark: made for a turn not taken
        forecast, count = self._forecast(ex, session), await self._count(ex, spliced)
        return not forecast.starts(forecast.judged(count.raw) + forecast.ahead(tokens))

    async def _wait(self, session: Session) -> Head | None:
        """A running compaction's head, if it finishes within the policy's wait."""
        task = session.running
        if task is None:
            return None
        done, _ = await asyncio.wait({task}, timeout=self.policy.wait_seconds)
        if not done or task.cancelled() or task.exception() is not None:
            return None
        head = task.result()
        return head if head is not None and session.newer(head) else None

    async def _made_now(
        self,
        ex: Exchange,
        session: Session,
        client: list[JsonDict],
        counted: Count | None,
        head: Head | None = None,
    ) -> tuple[Head, list[JsonDict], Count] | None:
        """`head` (a finished compaction's) or one made at once, with the messages it gives
        and their count; when those still pass the limit, one that summarizes all after the
        system prompt again, the old head and the pinned messages too, if it sends fewer.
        None when no head could be made."""

        async def heads() -> AsyncIterator[Head | None]:
            yield head or await self._compact(self.immediate, ex, client, session.head, counted)
            yield await self._compact(
                self.immediate, ex, client, session.head, counted, squeeze=True
            )

        return await self._chosen(ex, self._forecast(ex, session), client, heads())

    async def _compact(
        self,
        service: CompactionService,
        ex: Exchange,
        client: list[JsonDict],
        head: Head | None,
        counted: Count | None,
        squeeze: bool = False,
        later: bool = False,
        spare: bool = False,
    ) -> Head | None:
        """A new head for `client` (of our count `counted`, else counted here): what follows
        `head` (past the fold share, with the head's summaries) up to a cut, compacted by
        `service`; `squeeze`: the pinned messages too; `later`: made in the background, for
        a later request (larger by the turns that come meanwhile, and following the model's
        reading of `client`'s latest turn);
        `spare`: a standby, which keeps room for the turn it is for (with `squeeze`: one
        that summarizes the pinned messages and the head too, put in over the limit only;
        `_standby`)."""
        counted = counted or await self._count(ex, client)
        counts = counted.messages
        lead = leading_system(client) if ex.format != "anthropic" else 0
        session = self._sessions.get(ex.session_id)
        forecast = self._forecast(ex, session)
        if squeeze:
            pinned = lead
        elif head is not None:
            pinned = head.pinned
        else:
            pinned = forecast.pin(client, counts, lead, counted.fixed)
        made = session.made if session is not None and session.made else None
        summary = made or int(self.policy.head_share * ex.limit)
        pin = forecast.judged(sum(counts[lead:pinned]))
        fold = head is not None and (squeeze or head.tokens > self.policy.fold_share * ex.limit)
        kept_head = head.tokens if head is not None and not fold else pin  # before the summary
        start = head.replaced if head is not None else pinned
        guess = kept_head + summary
        ahead = 0
        if later:  # from the size of the request it is cut from, its head in
            after = sum(counts[head.replaced :] if head is not None else counts)
            now = forecast.judged(counted.fixed + after) + (head.tokens if head else 0)
            ahead = forecast.ahead(now)
        room = max(forecast.room(), forecast.surprise() if spare else 0)
        keep = forecast.keep(counted.fixed, guess + ahead, room)
        cut = choose_cut(client, counts, start, keep, read=later)
        if cut is None or counted.fixed + guess + sum(counts[cut:]) > ex.limit:
            cut = len(client)  # even the latest cut keeps too much: all of it, then `Continue.`
        if cut <= start:
            return None
        if head is None or fold:
            # A fold merges summaries: the old head's (past the pinned messages) and what
            # came after it, never the turns it stands for again.
            earlier = list(head.core[pinned:]) if head is not None else []
            prior, part = client[:pinned], joined_part(earlier, client[start:cut])
        else:
            prior, part = list(head.core), joined_part(client[head.replaced : cut])
        with metering() as tally:
            compacted = await compacted_part(service, ex, client[:lead], part)
        if compacted is None:
            return None
        produced, archive = compacted
        core = [*prior, *carried(standing(part), prior, produced)]
        if ex.api == "anthropic" and message_breakpoints([*client, *ex.live]):
            # One breakpoint, at the head's end: the previous head's end is a prefix the
            # provider wrote, found by its look-back from there, so the first request after
            # this one reads it; a breakpoint left at each old head's end would pass the
            # four a request may set, and then none of the head's would be kept.
            core = [*without_breakpoints(core[:-1]), with_breakpoint(core[-1])]
        each_count = await message_counts(self._tokenizer(ex.spec), ex, core)
        tokens = sum(each_count)
        if session is not None:
            session.made = forecast.judged(sum(each_count[len(prior) :]))
        tokens = Forecast.of(self.policy, ex, None).judged(tokens)
        head = make_head(core, client, cut, tokens, pinned, sum(counts[:cut]))
        quick = service is self.immediate
        return replace(head, quick=quick, unpinned=squeeze, archive=archive, cost=tally.cost)

    def _within_breakpoints(self, ex: Exchange, sent: list[JsonDict]) -> list[JsonDict]:
        """`sent`, the head's breakpoint living as long as the client's after it, or without
        it when with it the request would set more than the provider's four."""
        session = self._sessions.get(ex.session_id)
        if ex.api != "anthropic" or sent is ex.messages or session is None or session.head is None:
            return sent
        return within_four(ex.body, sent, len(session.head.messages), ex.live)
