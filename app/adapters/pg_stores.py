"""The shared state on PostgreSQL: archives, compaction records, seen times and jobs,
behind the same ports as the file stores, so the service layer does not know which it has.

Each call is one short transaction on a pooled connection; every database error becomes
the port's own error (`ArchiveError`, `RecordStoreError`, `SeenStoreError`,
`JobStoreError`), which the service already turns into a defined outcome. An archive is
committed with `synchronous_commit = on` whatever the server's default, so a `save` that
returned is on the database's disk; its exact JSON bytes are stored with their sha256 and checked on
every load.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import orjson
import psycopg
from psycopg.types.json import Jsonb
from pydantic import ValidationError

from app.adapters import pg_recall
from app.adapters.archive_store import decode_archive, encode_archive
from app.adapters.pg_database import Database, describe
from app.core.errors import ArchiveError, RecallDeadlineError, RecordStoreError, SeenStoreError
from app.core.json_numbers import dumps, loads
from app.core.ports import Archive
from app.core.recall import Query, RecallResult, TimeLeft
from app.core.sessions import (
    IN_FLIGHT,
    CompactionRecord,
    JobStoreError,
    JobTakenOverError,
    is_valid_id,
)

log = logging.getLogger("context_compact.database")

JsonDict = dict[str, Any]
_IN_FLIGHT_SQL = "('queued', 'running')"


class PgArchiveStore:
    """`ArchiveStore` on PostgreSQL; also what `/readyz` asks about the database."""

    check_name = "database_ready"

    def __init__(self, database: Database, grace: timedelta | None = None) -> None:
        """`grace`: recall leaves out the archives no record names stored longer ago (a
        killed compaction's leftovers, which the retention sweep deletes)."""
        self._db = database
        self._grace = grace

    def save(self, archive: Archive) -> None:
        ref = archive.ref
        if not is_valid_id(ref.id):
            raise ArchiveError("invalid archive id")
        if ref.session_id is not None and not is_valid_id(ref.session_id):
            raise ArchiveError("invalid session id")
        body = encode_archive(archive)
        index = pg_recall.prepare(archive)  # the CPU work, before a connection is taken
        with _errors(ArchiveError, "archive write failed"), self._db.connection() as conn:
            with conn.transaction():
                conn.execute("SET LOCAL synchronous_commit TO on")
                self._db.step(conn, len(body))  # a large body is given time by its size
                inserted = conn.execute(
                    "INSERT INTO compact_archives (id, session_id, created_at, message_count,"
                    " sha256, body, body_sha256) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (id) DO NOTHING",
                    (
                        ref.id,
                        ref.session_id,
                        archive.created_at,
                        ref.message_count,
                        ref.sha256,
                        body,
                        hashlib.sha256(body).hexdigest(),
                    ),
                ).rowcount
                if inserted == 1:
                    pg_recall.write(conn, index, ref.id, lambda size: self._db.step(conn, size))
            if inserted != 1:
                raise ArchiveError("archive already exists")

    def load(self, archive_id: str) -> Archive | None:
        if not is_valid_id(archive_id):
            return None
        with _errors(ArchiveError, "archive read failed"), self._db.connection() as conn:
            row = conn.execute(
                "SELECT body, body_sha256 FROM compact_archives WHERE id = %s", (archive_id,)
            ).fetchone()
        if row is None:
            return None
        body = bytes(row[0])
        if hashlib.sha256(body).hexdigest() != row[1]:
            raise ArchiveError("archive is corrupt: checksum mismatch")
        return decode_archive(archive_id, body)

    def delete(self, archive_id: str) -> None:
        """Removes the archive of a compaction that was refused (its result was not kept);
        a missing one is already gone."""
        if not is_valid_id(archive_id):
            raise ArchiveError("invalid archive id")
        with _errors(ArchiveError, "archive delete failed"), self._db.connection() as conn:
            # Its postings have no foreign key (a check per word would slow every save).
            pg_recall.delete(conn, archive_id)
            conn.execute("DELETE FROM compact_archives WHERE id = %s", (archive_id,))

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        """The recall on the word index (`app.adapters.pg_recall`): the session column
        keeps other sessions' archives out, and no archive body is read but those of
        archives saved before the index, once."""
        if not is_valid_id(session_id) or not query.terms:
            return RecallResult([])
        try:
            with _errors(ArchiveError, "archive search failed"), self._db.connection() as conn:
                return pg_recall.search(conn, session_id, query, limit, time_left, self._grace)
        except ArchiveError as exc:
            if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise RecallDeadlineError("the recall passed its deadline") from exc
            raise

    def writable(self) -> bool:
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        return self._db.unavailable_reason()


class PgRecordStore:
    """`RecordStore` on PostgreSQL: one row per record, never replaced."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def append(self, record: CompactionRecord) -> None:
        if not (is_valid_id(record.id) and is_valid_id(record.session_id)):
            raise RecordStoreError("invalid record or session id")
        document = orjson.loads(orjson.dumps(record.model_dump()))
        with _errors(RecordStoreError, "record write failed"), self._db.connection() as conn:
            conn.execute(
                "INSERT INTO compact_records (session_id, id, record) VALUES (%s, %s, %s)",
                (record.session_id, record.id, Jsonb(document)),
            )

    def withdraw(self, session_id: str, archive_id: str) -> None:
        """Deletes the session's record naming `archive_id` (`app.core.sessions.retention`)."""
        with _errors(RecordStoreError, "record delete failed"), self._db.connection() as conn:
            conn.execute(
                "DELETE FROM compact_records WHERE session_id = %s AND record->>'archive_id' = %s",
                (session_id, archive_id),
            )

    def list(self, session_id: str) -> list[CompactionRecord]:
        """Every readable record of the session, oldest first; corrupt rows are skipped."""
        if not is_valid_id(session_id):
            return []
        with _errors(RecordStoreError, "record read failed"), self._db.connection() as conn:
            rows = conn.execute(
                "SELECT id, record FROM compact_records WHERE session_id = %s ORDER BY id",
                (session_id,),
            ).fetchall()
        records = []
        for record_id, document in rows:
            try:
                records.append(CompactionRecord.model_validate(document))
            except ValidationError as exc:
                log.warning(
                    "skipping unreadable record", extra={"record": record_id, "error": str(exc)}
                )
        return records


class PgSeenStore:
    """`SeenStore` on PostgreSQL: one row per (session, file), replaced whole."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def last_seen(self, session_id: str, location: str) -> int | None:
        _check_session(session_id)
        with _errors(SeenStoreError, "seen time unreadable"), self._db.connection() as conn:
            row = conn.execute(
                "SELECT mtime_ns FROM compact_seen WHERE session_id = %s AND location = %s",
                (session_id, location),
            ).fetchone()
        return int(row[0]) if row else None

    def remember(self, session_id: str, location: str, mtime_ns: int) -> None:
        _check_session(session_id)
        with _errors(SeenStoreError, "seen time write failed"), self._db.connection() as conn:
            conn.execute(
                "INSERT INTO compact_seen (session_id, location, mtime_ns) VALUES (%s, %s, %s)"
                " ON CONFLICT (session_id, location) DO UPDATE SET mtime_ns = EXCLUDED.mtime_ns",
                (session_id, location, mtime_ns),
            )


class PgJobStore:
    """`JobStore` and `JobQueue` on PostgreSQL.

    The record is a JSON column beside the columns the database decides on: `state`,
    `session_id` (a partial unique index allows one job in flight per session, so two
    submits racing on two replicas cannot both be accepted), `owner` and `heartbeat_at`
    (the lease), `cancel_requested`, and the request itself, so a job whose replica died
    can be run again elsewhere. A write carries its owner: once another replica has taken a
    job over, the old owner's writes no longer land."""

    def __init__(self, database: Database) -> None:
        self._db = database

    # JobStore

    def save(self, job: JsonDict) -> None:
        job_id = _job_id(job)
        with _errors(JobStoreError, "job write failed"), self._db.connection() as conn:
            written = conn.execute(
                "INSERT INTO compact_jobs AS j (id, session_id, state, owner, heartbeat_at,"
                " finished_at, record) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state,"
                " heartbeat_at = EXCLUDED.heartbeat_at, finished_at = EXCLUDED.finished_at,"
                " record = EXCLUDED.record"
                " WHERE j.owner IS NOT DISTINCT FROM EXCLUDED.owner",
                (job_id, *_columns(job), _jsonb(job)),
            ).rowcount
        if written != 1:
            raise JobTakenOverError("the job was taken over by another replica")

    def load(self, job_id: str) -> JsonDict | None:
        if not is_valid_id(job_id):
            return None
        with _errors(JobStoreError, "job read failed"), self._db.connection() as conn:
            row = conn.execute(
                "SELECT record::text FROM compact_jobs WHERE id = %s", (job_id,)
            ).fetchone()
        return _record(row[0]) if row else None

    def load_all(self) -> list[JsonDict]:
        with _errors(JobStoreError, "job read failed"), self._db.connection() as conn:
            rows = conn.execute("SELECT record::text FROM compact_jobs ORDER BY id").fetchall()
        return [r for r in (_record(row[0]) for row in rows) if r is not None]

    def delete(self, job_id: str) -> None:
        if not is_valid_id(job_id):
            return
        with _errors(JobStoreError, "job delete failed"), self._db.connection() as conn:
            conn.execute("DELETE FROM compact_jobs WHERE id = %s", (job_id,))

    def request_cancel(self, job_id: str) -> None:
        if not is_valid_id(job_id):
            raise JobStoreError("invalid job id")
        with _errors(JobStoreError, "cancel request not written"), self._db.connection() as conn:
            conn.execute("UPDATE compact_jobs SET cancel_requested = true WHERE id = %s", (job_id,))

    def cancel_requested(self, job_id: str) -> bool:
        if not is_valid_id(job_id):
            return False
        with _errors(JobStoreError, "job read failed"), self._db.connection() as conn:
            row = conn.execute(
                "SELECT cancel_requested FROM compact_jobs WHERE id = %s", (job_id,)
            ).fetchone()
        return bool(row and row[0])

    # The session index is the partial unique index: nothing to write or clean.

    def set_session_job(self, session_id: str, job_id: str) -> None:
        return None

    def session_job(self, session_id: str) -> str | None:
        if not is_valid_id(session_id):
            return None
        with _errors(JobStoreError, "job read failed"), self._db.connection() as conn:
            row = conn.execute(
                f"SELECT id FROM compact_jobs WHERE session_id = %s AND state IN {_IN_FLIGHT_SQL}",
                (session_id,),
            ).fetchone()
        return str(row[0]) if row else None

    def session_jobs(self) -> dict[str, str]:
        return {}

    def delete_session(self, session_id: str, job_id: str) -> None:
        return None

    # JobQueue

    def create(self, job: JsonDict, request: JsonDict) -> str | None:
        """Inserts a new job in flight with its request; None, or the id of the session's
        job already in flight (then nothing is written)."""
        job_id = _job_id(job)
        with (
            _errors(JobStoreError, "job write failed"),
            self._db.connection() as conn,
            conn.transaction(),
        ):
            inserted = conn.execute(
                "INSERT INTO compact_jobs (id, session_id, state, owner, heartbeat_at,"
                " finished_at, record, request) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                f" ON CONFLICT (session_id) WHERE state IN {_IN_FLIGHT_SQL} DO NOTHING",
                (job_id, *_columns(job), _jsonb(job), _jsonb(request)),
            ).rowcount
            if inserted == 1:
                return None
            row = conn.execute(
                f"SELECT id FROM compact_jobs WHERE session_id = %s AND state IN {_IN_FLIGHT_SQL}",
                (job.get("session_id"),),
            ).fetchone()
        return str(row[0]) if row else "unknown"

    def take_over(
        self,
        owner: str,
        now: datetime,
        abandoned_before: datetime,
        limit: int,
        job_id: str | None = None,
    ) -> list[tuple[JsonDict, JsonDict]]:
        """Claims up to `limit` jobs in flight whose lease ran out before `abandoned_before`
        (or just `job_id`), skipping rows another replica is claiming: each becomes
        `queued`, owned by `owner`, with a fresh heartbeat. Their records and requests."""
        if limit <= 0:
            return []
        only = "AND id = %(job_id)s" if job_id is not None else ""
        with (
            _errors(JobStoreError, "job take-over failed"),
            self._db.connection() as conn,
            conn.transaction(),
        ):
            rows = conn.execute(
                "SELECT id, record::text, request::text FROM compact_jobs"
                f" WHERE state IN {_IN_FLIGHT_SQL} AND request IS NOT NULL"
                " AND NOT cancel_requested"
                " AND (heartbeat_at IS NULL OR heartbeat_at <= %(before)s)"
                f" {only} ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
                {"before": abandoned_before, "limit": limit, "job_id": job_id},
            ).fetchall()
            claimed = []
            for row_id, record_text, request_text in rows:
                record, request = _record(record_text) or {}, _record(request_text) or {}
                job = {
                    **record,
                    "state": "queued",
                    "owner": owner,
                    "heartbeat_at": now.isoformat(),
                }
                conn.execute(
                    "UPDATE compact_jobs SET state = 'queued', owner = %s, heartbeat_at = %s,"
                    " record = %s WHERE id = %s",
                    (owner, now, _jsonb(job), row_id),
                )
                claimed.append((job, request))
        return claimed

    def release(self, owner: str, job_ids: Sequence[str]) -> None:
        """Ends this replica's lease on its jobs in flight, so another replica takes them
        over at its next look instead of waiting for the lease to run out."""
        if not job_ids:
            return
        with _errors(JobStoreError, "job release failed"), self._db.connection() as conn:
            conn.execute(
                "UPDATE compact_jobs SET heartbeat_at = NULL"
                f" WHERE id = ANY(%s) AND owner = %s AND state IN {_IN_FLIGHT_SQL}",
                (list(job_ids), owner),
            )


@contextmanager
def _errors(kind: type[Exception], what: str) -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise kind(f"{what}: {describe(exc)}") from exc


def _check_session(session_id: str) -> None:
    if not is_valid_id(session_id):
        raise SeenStoreError("invalid session id")


def _job_id(job: JsonDict) -> str:
    job_id = job.get("id")
    if not isinstance(job_id, str) or not is_valid_id(job_id):
        raise JobStoreError("invalid job id")
    return job_id


def _columns(job: JsonDict) -> tuple[Any, ...]:
    state = job.get("state")
    heartbeat = job.get("heartbeat_at")
    finished = job.get("finished_at")
    return (
        job.get("session_id"),
        state,
        job.get("owner"),
        datetime.fromisoformat(heartbeat) if heartbeat and state in IN_FLIGHT else None,
        datetime.fromisoformat(finished) if finished else None,
    )


def _record(text: str | None) -> JsonDict | None:
    """A jsonb row read as text, so that no number is beyond what the answer can write
    (psycopg's `json.loads` would give `1e309`, stored by value, as a 310-digit int)."""
    if text is None:
        return None
    try:
        value = loads(text.encode(), max_number_chars=None)[0]
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _jsonb(value: dict[str, Any]) -> Jsonb:
    """A job's record or request as jsonb, written by the one writer that knows numbers kept
    as sent (psycopg's `json.dumps` writes `1e309` as `Infinity`, which PostgreSQL refuses).
    jsonb stores numbers by value: read back, `-0` is `0` (archives are stored as text)."""
    return Jsonb(value, dumps=_json_text)


def _json_text(value: Any) -> str:
    return dumps(value).decode()
