"""A typed Python client for Context Compact, the sidecar that counts and compacts LLM agent
message lists: `ContextCompactClient` (blocking) and `AsyncContextCompactClient`, on httpx.

    from context_compact_client import ContextCompactClient

    with ContextCompactClient() as compact:  # COMPACT_URL, COMPACT_API_TOKEN, or the defaults
        if compact.should_compact(messages, last_usage=usage)["should_compact"]:
            messages = compact.compact(messages, last_usage=usage, session_id="s-1")["messages"]
"""

from context_compact_client.client import (
    COMPACT_TIMEOUT,
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    AsyncContextCompactClient,
    ContextCompactClient,
)
from context_compact_client.errors import (
    ConflictError,
    ConnectionFailedError,
    ContextCompactError,
    DeadlineError,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
    RequestTooLargeError,
    ServiceError,
    UnauthorizedError,
    UnavailableError,
    UnexpectedResponseError,
)

__version__ = "0.1.0"

__all__ = [
    "COMPACT_TIMEOUT",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "AsyncContextCompactClient",
    "ConflictError",
    "ConnectionFailedError",
    "ContextCompactClient",
    "ContextCompactError",
    "DeadlineError",
    "InvalidRequestError",
    "NotFoundError",
    "RateLimitedError",
    "RequestTooLargeError",
    "ServiceError",
    "UnauthorizedError",
    "UnavailableError",
    "UnexpectedResponseError",
]
