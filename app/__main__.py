"""The command line, installed as the `context-compact` console script (`python -m app` runs
the same, but imports whichever `app` package comes first on the path: in a project with an
`app/` of its own, the project's). `serve` runs the HTTP service; `count` and `compact` run
the same pipeline in-process on a file or stdin and print what the API would answer.

Exit codes: 0 answered (a compaction that compacted nothing included: the output says
why), 2 bad input, usage or configuration (a message on stderr names the problem),
3 `serve` could not start (uvicorn's code: the address is taken, say), 1 anything
unexpected.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from app.core.vocabulary import STRATEGY_NAMES

if TYPE_CHECKING:
    from app.cli.reading import Answer
    from app.settings import Settings

FORMATS = ("auto", "anthropic", "openai")
STARTUP_FAILURE = 3

EXAMPLES = """\
examples:
  context-compact serve --port 8080
  context-compact count session.json
  context-compact compact session.json --context-window 32000 --threshold 0.5
  context-compact compact session.json --force --strategy tail -o compacted.json
  cat session.jsonl | context-compact count --format openai

Settings come from the COMPACT_* environment variables (and .env), as for the service.
"""
COUNT_EXAMPLES = """\
examples:
  context-compact count session.json
  context-compact count session.jsonl --format openai
  context-compact count - < body.json          # a /count body: its fields are used
"""
COMPACT_EXAMPLES = """\
Without --force, a list compacts only at or above --threshold x --context-window tokens
(defaults: COMPACT_THRESHOLD and COMPACT_CONTEXT_WINDOW, 0.8 x 200000): a short session
comes back unchanged with reason below_threshold, and a note on stderr says why.

examples:
  context-compact compact session.json --context-window 32000 --threshold 0.5
  context-compact compact session.json --force --instructions "Focus on the failing test."
  context-compact compact session.json --force --strategy prune -o compacted.json
"""
SERVE_EXAMPLES = """\
examples:
  context-compact serve
  COMPACT_API_TOKEN=s3cret context-compact serve --host 127.0.0.1 --port 9000
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="context-compact",
        description="Context Compact: count and compact LLM agent message lists.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="run the HTTP service",
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", help="bind address (default: COMPACT_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: COMPACT_PORT or 8080)")

    def with_input(name: str, help_text: str, epilog: str) -> argparse.ArgumentParser:
        command = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_argument(
            "file",
            nargs="?",
            default="-",
            help="JSON list, JSON object with `messages`, or JSONL; `-` or none: stdin",
        )
        command.add_argument(
            "--format",
            choices=FORMATS,
            help="message shape (default: auto); one the messages contradict is refused",
        )
        command.add_argument("--output", "-o", help="write the JSON here instead of stdout")
        return command

    count = with_input(
        "count", "count the tokens of a message list (as POST /count)", COUNT_EXAMPLES
    )
    count.add_argument("--tokenizer", choices=("tiktoken", "anthropic"))
    compact = with_input("compact", "compact a message list (as POST /compact)", COMPACT_EXAMPLES)
    compact.add_argument(
        "--force",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="compact even below the threshold",
    )
    compact.add_argument(
        "--context-window",
        dest="context_window",
        type=_positive_int,
        metavar="TOKENS",
        help="the model's context window (default: COMPACT_CONTEXT_WINDOW)",
    )
    compact.add_argument(
        "--threshold",
        type=_fraction,
        metavar="FRACTION",
        help="compact at this share of the window, in (0, 1] (default: COMPACT_THRESHOLD)",
    )
    compact.add_argument("--strategy", help=f"options.strategy: {', '.join(STRATEGY_NAMES)}")
    compact.add_argument("--session-id", dest="session_id", help="groups the archives")
    compact.add_argument("--instructions", help="focus for the summary")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of tokens, got {text!r}"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    from pydantic_settings import SettingsError

    from app.settings import Settings
    from app.settings.names import explain, unknown_variables

    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"error: configuration: {explain(exc)}", file=sys.stderr)
        return 2
    except SettingsError as exc:  # a value the settings could not even decode (JSON)
        print(f"error: configuration: {_undecodable(exc)}", file=sys.stderr)
        return 2
    unknown = unknown_variables(os.environ)
    if args.command == "serve":
        return _serve(settings, args, unknown)
    for line in unknown:
        print(f"warning: {line}", file=sys.stderr)
    return _run(settings, args)


def _undecodable(error: Exception) -> str:
    """One line naming the variable whose value could not be decoded, and why:
    pydantic-settings names only the field, and the reason only in the chained error."""
    import json
    import re

    from app.settings.names import variable_of

    field = re.search(r'field "(\w+)"', str(error))
    where = variable_of((field.group(1),)) if field else "a setting"
    cause = error.__cause__
    if isinstance(cause, json.JSONDecodeError):
        return f"{where}: not valid JSON ({cause})"
    return f"{where}: {cause or error}"


def _serve(settings: Any, args: argparse.Namespace, unknown: list[str]) -> int:
    import logging

    import uvicorn

    from app.api.parts import parts_of
    from app.main import create_app
    from app.serving import PortDispatch, listening_socket, server_config
    from app.wiring.service import setup_logging

    setup_logging(settings)
    for line in unknown:
        logging.getLogger("context_compact").warning(line)
    host, port = args.host or settings.host, args.port or settings.port
    app = create_app(settings)
    parts = parts_of(app)
    proxy = parts.proxy if parts is not None else None
    if proxy is None:
        server = uvicorn.Server(server_config(app, settings, host, port))
        with contextlib.suppress(KeyboardInterrupt):
            server.run()
        return 0 if server.started else STARTUP_FAILURE
    try:
        sockets = [
            listening_socket(host, port),
            listening_socket(settings.proxy_host, settings.proxy_port),
        ]
    except OSError as exc:
        logging.getLogger("context_compact").error(f"cannot listen: {exc}")
        return STARTUP_FAILURE
    both = PortDispatch(app, proxy, sockets[1].getsockname()[1])
    server = uvicorn.Server(server_config(both, settings, host, port))
    logging.getLogger("context_compact").info(
        "proxy listening", extra={"host": settings.proxy_host, "port": settings.proxy_port}
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=sockets)
    return 0 if server.started else STARTUP_FAILURE


def _run(settings: Any, args: argparse.Namespace) -> int:
    from app.adapters.logs import configure_logging
    from app.cli import reading as cli
    from app.core.json_numbers import dumps

    configure_logging(settings.log_format, "warning")
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    flags = {k: v for k, v in vars(args).items() if k not in ("command", "file", "output")}
    try:
        data = cli.parse_input(text)
        answer = _command(args.command)(data, flags, settings)
    except cli.InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if answer.note:
        print(f"note: {answer.note}", file=sys.stderr)
    rendered = dumps(answer.json, indent=True).decode() + "\n"  # numbers as sent
    if args.output:
        try:
            Path(args.output).write_text(rendered, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(rendered)
    return 0


def _command(name: str) -> Callable[[Mapping[str, Any], Mapping[str, Any], Settings], Answer]:
    """The command's own module, imported alone: `count` builds no pipeline."""
    if name == "count":
        from app.cli.count import count

        return count
    from app.cli.compact import compact

    return compact


# Commands that answer once and exit: see `run`.
ONE_SHOT = ("count", "compact")


def run(argv: list[str] | None = None) -> None:
    """The console script: `main`, then, for `count` and `compact`, an exit without the
    interpreter's teardown (`os._exit` once stdout, stderr and the logs are flushed).
    Teardown frees one by one every object the imports made, a good part of a command's
    time, where the system takes the memory back at once; nothing is left to close: the
    archive is written and synced and the clients closed before `main` returns. Tests call
    `main`, which returns."""
    args = sys.argv[1:] if argv is None else argv
    code = main(args)
    if args[:1] and args[0] in ONE_SHOT:
        import logging

        logging.shutdown()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: leave as Python would, reporting it
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
