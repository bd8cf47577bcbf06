"""The proxy served by a real uvicorn on 127.0.0.1 in a thread, in front of the fake
provider, for the real SDKs: the whole app (`create_app`) with `COMPACT_PROXY_PORT`, its
upstreams pointed at the fake, the API and the proxy on their own ports as `serve` runs
them (`PortDispatch` over two sockets, `server_config`'s protocol)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from app.api.parts import parts_of
from app.main import create_app
from app.proxy.app import ProxyApp
from app.serving import PortDispatch, listening_socket, server_config
from app.settings import Settings

START_TIMEOUT = 10.0


@dataclass(frozen=True)
class Live:
    api: str
    proxy: str
    app: ProxyApp


@contextmanager
def serve_proxy(upstream_url: str, data: Path, **settings: Any) -> Iterator[Live]:
    """The app with its proxy in front of `upstream_url`; yields both base URLs."""
    config = Settings(
        data_dir=str(data),
        workdir=str(data),
        proxy_port=1,  # replaced by the socket's own port below
        proxy_anthropic_url=upstream_url,
        proxy_openai_url=upstream_url,
        **settings,
    )
    app = create_app(config)
    parts = parts_of(app)
    assert parts is not None
    assert isinstance(parts.proxy, ProxyApp)
    sockets = [listening_socket("127.0.0.1", 0), listening_socket("127.0.0.1", 0)]
    ports = [s.getsockname()[1] for s in sockets]
    both = PortDispatch(app, parts.proxy, ports[1])
    served = server_config(both, config, "127.0.0.1", 0)
    served.lifespan = "on"
    server = uvicorn.Server(served)
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    try:
        yield Live(f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}", parts.proxy)
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
        for sock in sockets:
            sock.close()
