"""The command line: `serve` runs the HTTP service; `count` and `compact` run the same
pipeline in-process on a file or stdin and print what the API would answer.

Exit codes: 0 answered (a compaction that compacted nothing included: the output says
why), 2 bad input, usage or configuration (a message on stderr names the problem),
1 anything unexpected.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

FORMATS = ("auto", "anthropic", "openai")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="Context Compact")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (default: COMPACT_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: COMPACT_PORT or 8080)")

    def with_input(name: str, help_text: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text)
        command.add_argument(
            "file",
            nargs="?",
            default="-",
            help="JSON list, JSON object with `messages`, or JSONL; `-` or none: stdin",
        )
        command.add_argument("--format", choices=FORMATS, help="message shape (default: auto)")
        command.add_argument("--output", "-o", help="write the JSON here instead of stdout")
        return command

    count = with_input("count", "count the tokens of a message list (as POST /count)")
    count.add_argument("--tokenizer", choices=("tiktoken", "anthropic"))
    compact = with_input("compact", "compact a message list (as POST /compact)")
    compact.add_argument(
        "--force",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compact even below the threshold",
    )
    compact.add_argument("--strategy", help="options.strategy")
    compact.add_argument("--session-id", dest="session_id", help="groups the archives")
    compact.add_argument("--instructions", help="focus for the summary")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    from app.settings import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"error: configuration: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        return _serve(settings, args)
    return _run(settings, args)


def _serve(settings: Any, args: argparse.Namespace) -> int:
    import uvicorn

    from app.main import create_app, setup_logging

    setup_logging(settings)
    uvicorn.run(
        create_app(settings),
        host=args.host or settings.host,
        port=args.port or settings.port,
        log_config=None,  # our handler (setup_logging) writes uvicorn's lines too
        access_log=False,  # one `request` line per request comes from the app
    )
    return 0


def _run(settings: Any, args: argparse.Namespace) -> int:
    from app import cli
    from app.main import setup_logging

    setup_logging(settings, level="warning")
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    flags = {k: v for k, v in vars(args).items() if k not in ("command", "file", "output")}
    try:
        data = cli.parse_input(text)
        run = cli.count if args.command == "count" else cli.compact
        answer = run(data, flags, settings)
    except cli.InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rendered = json.dumps(answer, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(rendered, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
