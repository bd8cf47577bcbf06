"""A TCP proxy on 127.0.0.1 in front of the database that the test can freeze: every
connection stays open, nothing is forwarded either way, and no error reaches either end —
what a dead NAT or a stuck network path does. `thaw` forwards what was held and resumes;
`cut` closes every connection. New connections made while frozen are accepted and
stalled the same way."""

from __future__ import annotations

import socket
import threading
from contextlib import suppress


class FreezingProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._flowing = threading.Condition()
        self._frozen = False
        self._closed = False
        self._sockets: set[socket.socket] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        with self._flowing:
            self._frozen = True

    def thaw(self) -> None:
        with self._flowing:
            self._frozen = False
            self._flowing.notify_all()

    def cut(self) -> None:
        with self._flowing:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with suppress(OSError):
                sock.close()

    def close(self) -> None:
        with self._flowing:
            self._closed = True
            self._flowing.notify_all()
        with suppress(OSError):
            self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=3)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._flowing:
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _wait_until_flowing(self) -> bool:
        """Holds the caller while frozen; False once the proxy is closed."""
        with self._flowing:
            self._flowing.wait_for(lambda: not self._frozen or self._closed)
            return not self._closed

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                # What arrives while frozen (bytes or the end of the stream) is held.
                if not self._wait_until_flowing() or not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            # Each socket is the source of one pump: that pump closes it, also when the
            # proxy closed before this connection was registered (no socket left to GC).
            source.close()
