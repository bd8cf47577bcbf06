"""Background compactions: workers, queue, how long a finished one is kept, and the lease
that tells a dead replica's jobs."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

JobWorkers = Annotated[
    int,
    Field(4, ge=1, description="background compactions that run at once"),
]

JobQueueLimit = Annotated[
    int,
    Field(64, ge=0, description="background compactions that may wait for a worker (`503` above)"),
]

JobTtlSeconds = Annotated[
    float,
    Field(
        3600.0, gt=0, description="a finished background compaction is kept this long, then deleted"
    ),
]

JobLeaseSeconds = Annotated[
    float,
    Field(
        30.0,
        gt=0,
        description=(
            "a replica renews the lease of each job it runs every third of this; a job "
            "whose lease ran out (its replica died) is reported `failed: interrupted` by any "
            "replica sharing the data directory, or taken over and finished by another "
            "replica with `COMPACT_DATABASE_URL`"
        ),
    ),
]
