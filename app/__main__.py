"""`python -m app serve`: run the service with uvicorn on the configured host and port."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app", description="Context Compact")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (default: COMPACT_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: COMPACT_PORT or 8080)")
    args = parser.parse_args(argv)

    import uvicorn

    from app.main import create_app
    from app.settings import Settings

    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    uvicorn.run(
        create_app(settings),
        host=args.host or settings.host,
        port=args.port or settings.port,
        log_level=settings.log_level,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
