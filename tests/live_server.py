"""The app served by a real uvicorn on 127.0.0.1 (a free port), in a thread of the test.

For what needs real sockets: the blocking client, the examples. Start-up and shutdown
are bounded; the server runs the app's lifespan like `python -m app serve`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

START_TIMEOUT = 10.0


@contextmanager
def serve_in_thread(app: FastAPI) -> Iterator[str]:
    """Yields the server's base URL; stops it on exit."""
    with serve_config_in_thread(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_config=None,
            access_log=False,
            ws="none",
            http="h11",
            lifespan="on",
        )
    ) as url:
        yield url


@contextmanager
def serve_config_in_thread(config: uvicorn.Config) -> Iterator[str]:
    """The same for a whole uvicorn configuration (its host must be 127.0.0.1, port 0)."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
