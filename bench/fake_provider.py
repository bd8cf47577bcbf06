"""The tests' fake provider in a process of its own, for timing the proxy against it
without the three sharing one interpreter's lock: `python -m bench.fake_provider` prints its
base URL on the first line and serves until its standard input closes. A request for the
model `stream-bench` is answered with 200 text deltas 2 ms apart; any other with the fake's
default short answer."""

from __future__ import annotations

import sys

from tests.fakes.provider import Answer, FakeProvider, Received, Text, answer

STREAM_MODEL = "stream-bench"
PIECES = ("word ",) * 200


def respond(received: Received) -> Answer | None:
    body = received.json if isinstance(received.json, dict) else {}
    if body.get("model") == STREAM_MODEL:
        return answer(Text("".join(PIECES), pieces=PIECES), event_delay=0.002)
    return None


def main() -> int:
    with FakeProvider(validate=False) as provider:
        provider.respond_with(respond)
        print(provider.url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
