"""What the proxy's tests read from the messages it sent in place of a client's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def pinned(sent: Sequence[Any], client: Sequence[Any]) -> int:
    """How many of the client's first messages were sent as they were, ahead of the head."""
    count = 0
    while count < min(len(sent), len(client)) and sent[count] == client[count]:
        count += 1
    return count
