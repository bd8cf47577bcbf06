"""Re-capture the request bodies of `tests/data/sdk_bodies/` from the SDKs' own wire.

Usage: python scripts/capture_sdk_bodies.py [--check]

Each body is what `anthropic` 2.x or `openai` 3.x puts on the wire for one call: the call is
made for real, through the SDK's HTTP client hook (an `httpx2.Client` whose transport
records the request and answers 400, so nothing leaves the process), and the JSON it sent
is written with the call, path and headers that matter. The histories handed to the SDKs
are built from the real transcripts of `tests/data/corpus/` (long enough to compact), with
what those transcripts lack added the way agents send it: thinking blocks with signatures
in a tool loop, images, a PDF, a user's new words sent beside tool results, Responses API
items. Nothing random: the same SDK versions write the same files. `--check` writes
nothing and exits 1 when a stored body differs from what the installed SDKs send.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import struct
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "corpus"
OUT = ROOT / "tests" / "data" / "sdk_bodies"

Json = dict[str, Any]
Send = Callable[[httpx2.Client], None]


def corpus(name: str, shape: str) -> list[Json]:
    messages: list[Json] = json.loads((CORPUS / f"{name}.{shape}.json").read_text("utf-8"))[
        "messages"
    ]
    return messages


def png(width: int, height: int, rgb: tuple[int, int, int]) -> str:
    """A valid PNG of one colour, base64: a real image for the providers' image rules."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height, 9))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(raw).decode()


def pdf(pages: list[str]) -> str:
    """A valid PDF of one line of text a page, base64."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    font = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>"
        )
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return base64.b64encode(out).decode()


def opaque(seed: str, size: int) -> str:
    """A stand-in for a provider's signature or encrypted content: base64, fixed per seed."""
    raw = b"".join(zlib.crc32(f"{seed}:{i}".encode()).to_bytes(4, "big") for i in range(size))
    return base64.b64encode(raw).decode()


def tool_names(messages: list[Json]) -> list[str]:
    names: dict[str, None] = {}
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                names[block["name"]] = None
        for call in message.get("tool_calls") or ():
            names[call["function"]["name"]] = None
    return list(names)


def schema(name: str) -> Json:
    key = "path" if name == "read_file" else "command"
    return {
        "type": "object",
        "properties": {key: {"type": "string", "description": f"The {key} for {name}."}},
        "required": [key],
    }


def anthropic_tools(messages: list[Json]) -> list[Json]:
    return [
        {"name": n, "description": f"The agent's `{n}` command.", "input_schema": schema(n)}
        for n in tool_names(messages)
    ]


def split_system(messages: list[Json]) -> tuple[str, list[Json]]:
    first, *rest = messages
    return first["content"], rest


def upto_pending(messages: list[Json]) -> list[Json]:
    """The history cut right after the last tool result: a tool loop in progress."""
    last = max(
        i
        for i, m in enumerate(messages)
        if m["role"] == "user"
        and isinstance(m["content"], list)
        and any(b.get("type") == "tool_result" for b in m["content"])
    )
    cut = messages[: last + 1]
    cut[-1] = {
        "role": "user",
        "content": [b for b in cut[-1]["content"] if b.get("type") == "tool_result"],
    }
    return cut


def with_thinking(messages: list[Json]) -> list[Json]:
    """Each assistant turn opens with its thinking block and signature, as extended
    thinking returns them; one is redacted, as the API sometimes returns it."""
    out = []
    for i, message in enumerate(messages):
        if message["role"] == "assistant":
            text = " ".join(b.get("text", "") for b in message["content"] if b["type"] == "text")
            thought: Json = {
                "type": "thinking",
                "thinking": f"The user wants the issue fixed. {text[:300]}",
                "signature": opaque(f"sig{i}", 48),
            }
            if i == 4:
                thought = {"type": "redacted_thinking", "data": opaque(f"red{i}", 64)}
            message = {"role": "assistant", "content": [thought, *message["content"]]}
        out.append(message)
    return out


ENVIRONMENT = "<environment_details>\n# Current Working Directory\n/repo\n</environment_details>"


def with_user_words(messages: list[Json], last_words: list[Json]) -> list[Json]:
    """Every tool result turn carries the harness's text beside its results, as Cline and
    Cursor send it; the last one also carries the user's new request (`last_words`)."""
    out = []
    for message in messages:
        content = message["content"]
        if message["role"] == "user" and isinstance(content, list):
            results = [b for b in content if b.get("type") == "tool_result"]
            if results:
                message = {
                    "role": "user",
                    "content": [*results, {"type": "text", "text": ENVIRONMENT}],
                }
        out.append(message)
    out[-1] = {"role": "user", "content": [*out[-1]["content"], *last_words]}
    return out


def anthropic_call(beta: bool = False, **params: Any) -> Send:
    def send(http: httpx2.Client) -> None:
        client = anthropic.Anthropic(api_key="sk-ant-capture", http_client=http, max_retries=0)
        messages = client.beta.messages if beta else client.messages
        messages.create(**params)

    return send


def openai_call(api: str, **params: Any) -> Send:
    def send(http: httpx2.Client) -> None:
        client = openai.OpenAI(api_key="sk-capture", http_client=http, max_retries=0)
        target = client.responses if api == "responses" else client.chat.completions
        target.create(**params)

    return send


IMAGE = png(640, 480, (40, 120, 200))
SCREENSHOT = png(1280, 800, (250, 250, 250))
SPEC = pdf([f"Page {n}: TimeDelta must round, not truncate, milliseconds." for n in (1, 2, 3)])


def anthropic_bodies() -> Iterator[tuple[str, str, Send]]:
    system, history = split_system(corpus("swe-marshmallow-code-marshmallow-1867", "anthropic"))
    yield (
        "anthropic_messages_tools",
        "messages.create: a coding session with its tools, a string system prompt",
        anthropic_call(
            model="claude-sonnet-4-20250514",
            max_tokens=8192,
            system=system,
            tools=anthropic_tools(history),
            tool_choice={"type": "auto"},
            metadata={"user_id": "user-7f3a"},
            service_tier="auto",
            messages=history,
        ),
    )
    system, history = split_system(corpus("swe-pydicom-pydicom-1458", "anthropic"))
    tools = anthropic_tools(history)
    tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral"}}
    last = history[-1]
    blocks = last["content"] if isinstance(last["content"], list) else []
    history[-1] = {
        "role": "user",
        "content": [*blocks[:-1], {**blocks[-1], "cache_control": {"type": "ephemeral"}}],
    }
    yield (
        "anthropic_cache_control",
        "messages.create: system blocks, the tools and the last turn with cache_control "
        "(3 breakpoints)",
        anthropic_call(
            model="claude-opus-4-1",
            max_tokens=16000,
            system=[
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}},
                {
                    "type": "text",
                    "text": "Answer in English.",
                    "cache_control": {"type": "ephemeral"},
                },
            ],
            tools=tools,
            messages=history,
        ),
    )
    system, history = split_system(
        corpus("swe-marshmallow-code-marshmallow-1867-from-source", "anthropic")
    )
    yield (
        "anthropic_thinking_tool_loop",
        "messages.create: extended thinking in a tool loop, every assistant turn with its "
        "signed thinking (one redacted), the list ending with tool results",
        anthropic_call(
            model="claude-sonnet-4",
            max_tokens=20000,
            thinking={"type": "enabled", "budget_tokens": 10000},
            system=system,
            tools=anthropic_tools(history),
            messages=with_thinking(upto_pending(history)),
        ),
    )
    system, history = split_system(
        corpus("swe-marshmallow-code-marshmallow-1867-cursors", "anthropic")
    )
    history[0] = {
        "role": "user",
        "content": [
            {"type": "text", "text": history[0]["content"]},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": IMAGE},
            },
        ],
    }
    words = [
        {"type": "text", "text": "The screenshot shows the failing widget: fix it too."},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": SCREENSHOT},
        },
    ]
    yield (
        "anthropic_images_user_words",
        "messages.create: images; tool results sent with the harness's text, the last "
        "with the user's new request and a screenshot",
        anthropic_call(
            model="claude-haiku-4-5",
            max_tokens=4096,
            system=system,
            tools=anthropic_tools(history),
            messages=with_user_words(upto_pending(history), words),
        ),
    )
    system, history = split_system(corpus("swe-marshmallow-code-marshmallow-1867-xml", "anthropic"))
    history[0] = {
        "role": "user",
        "content": [
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": SPEC},
                "title": "TimeDelta specification",
            },
            {"type": "text", "text": history[0]["content"]},
        ],
    }
    yield (
        "anthropic_pdf_document",
        "messages.create: a PDF document in the first user turn",
        anthropic_call(
            model="claude-opus-4-1-20250805",
            max_tokens=8192,
            system=system,
            tools=anthropic_tools(history),
            messages=history,
        ),
    )
    system, history = split_system(
        corpus("swe-marshmallow-code-marshmallow-1867-function-calling", "anthropic")
    )
    compacted = {
        "type": "compaction",
        "content": "Earlier: the user asked to fix TimeDelta rounding in marshmallow.",
        "encrypted_content": opaque("compaction", 32),
        "signature": opaque("compaction-sig", 24),
    }
    first = history[0]
    history[0] = {
        "role": "user",
        "content": [compacted, {"type": "text", "text": first["content"]}],
    }
    yield (
        "anthropic_beta_fields",
        "beta.messages.create with the beta-only fields 2.14 offers (billing_policy, "
        "thread, compaction, context_management, mcp_servers, diagnostics, fallbacks, "
        "output_config, speed, inference_geo) and a `compaction` block first",
        anthropic_call(
            beta=True,
            betas=["context-management-2025-06-27", "mcp-client-2025-04-04"],
            model="claude-sonnet-4",
            max_tokens=8192,
            system=system,
            tools=anthropic_tools(history),
            messages=history,
            billing_policy={"type": "billing_policy", "bill_to": "self"},
            thread={"type": "create"},
            compaction={"type": "summarize", "instructions": "Keep file paths."},
            context_management={
                "edits": [
                    {
                        "type": "clear_tool_uses_20250919",
                        "trigger": {"type": "input_tokens", "value": 100000},
                        "keep": {"type": "tool_uses", "value": 3},
                    }
                ]
            },
            mcp_servers=[{"type": "url", "name": "docs", "url": "https://mcp.example.com/sse"}],
            diagnostics={"previous_message_id": None},
            fallbacks="default",
            output_config={"effort": "high"},
            speed="standard",
            inference_geo="us",
        ),
    )


def chat_tools(messages: list[Json]) -> list[Json]:
    return [
        {
            "type": "function",
            "function": {
                "name": n,
                "description": f"The agent's `{n}` command.",
                "parameters": schema(n),
            },
        }
        for n in tool_names(messages)
    ]


def openai_bodies() -> Iterator[tuple[str, str, Send]]:
    history = corpus("swe-marshmallow-code-marshmallow-1867-function-calling-replace-f", "openai")
    history[0] = {"role": "developer", "content": history[0]["content"]}
    yield (
        "openai_chat_tools",
        "chat.completions.create: a developer message, tools, max_completion_tokens, "
        "a stream with stream_options",
        openai_call(
            "chat",
            model="gpt-5-mini",
            messages=history,
            tools=chat_tools(history),
            tool_choice="auto",
            parallel_tool_calls=True,
            max_completion_tokens=16000,
            reasoning_effort="medium",
            stream=True,
            stream_options={"include_usage": True},
            prompt_cache_key="session-91",
            safety_identifier="user-7f3a",
            store=False,
        ),
    )
    history = corpus("swe-marshmallow-code-marshmallow-1867-function-calling-replace-f-1", "openai")
    history[1] = {
        "role": "user",
        "content": [
            {"type": "text", "text": history[1]["content"]},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE}"}},
        ],
    }
    last_tool = max(i for i, m in enumerate(history) if m["role"] == "tool")
    history = history[: last_tool + 1]
    history.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The screenshot shows the failing widget: fix it too."},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:image/png;base64,{SCREENSHOT}", "detail": "high"},
                },
            ],
        }
    )
    yield (
        "openai_chat_images_user_words",
        "chat.completions.create: images, and the user's new request (text and a "
        "screenshot) right after the last tool message",
        openai_call(
            "chat",
            model="gpt-4o",
            messages=history,
            tools=chat_tools(history),
            max_tokens=4096,
            temperature=0.0,
        ),
    )


def responses_items(messages: list[Json], *, easy: bool = False) -> list[Json]:
    """A chat history as the Responses API's input items, each assistant tool turn with
    the reasoning item (summary and encrypted content) that came before its call."""
    items: list[Json] = []
    for i, message in enumerate(messages[1:], 1):
        role, content = message["role"], message.get("content")
        if role == "user" and easy:
            items.append({"role": "user", "content": content})
        elif role == "user":
            parts = (
                [{"type": "input_text", "text": content}] if isinstance(content, str) else content
            )
            items.append({"type": "message", "role": "user", "content": parts})
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": content,
                }
            )
        elif role == "assistant":
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{i:04d}",
                    "summary": [
                        {"type": "summary_text", "text": f"Step {i}: {content or ''}"[:200]}
                    ],
                    "encrypted_content": opaque(f"rs{i}", 96),
                }
            )
            if content:
                items.append(
                    {
                        "type": "message",
                        "id": f"msg_{i:04d}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": content, "annotations": []}],
                    }
                )
            for call in message.get("tool_calls") or ():
                items.append(
                    {
                        "type": "function_call",
                        "id": f"fc_{i:04d}",
                        "call_id": call["id"],
                        "name": call["function"]["name"],
                        "arguments": call["function"]["arguments"],
                        "status": "completed",
                    }
                )
    return items


def responses_tools(messages: list[Json]) -> list[Json]:
    return [
        {
            "type": "function",
            "name": n,
            "description": f"The agent's `{n}` command.",
            "parameters": schema(n),
            "strict": False,
        }
        for n in tool_names(messages)
    ]


def responses_bodies() -> Iterator[tuple[str, str, Send]]:
    history = corpus("swe-pydicom-pydicom-1458", "openai")
    items = responses_items(history)
    last_output = max(
        i for i, item in enumerate(items) if item.get("type") == "function_call_output"
    )
    yield (
        "openai_responses_tool_loop",
        "responses.create: message, reasoning (encrypted_content), function_call and "
        "function_call_output items, instructions, max_output_tokens, the list ending "
        "with a tool output",
        openai_call(
            "responses",
            model="gpt-5",
            instructions=history[0]["content"],
            input=items[: last_output + 1],
            tools=responses_tools(history),
            max_output_tokens=32000,
            reasoning={"effort": "medium", "summary": "auto"},
            include=["reasoning.encrypted_content"],
            store=False,
            parallel_tool_calls=False,
            text={"verbosity": "low"},
            prompt_cache_key="session-92",
        ),
    )
    history = corpus("swe-marshmallow-code-marshmallow-1867-xml-cursors", "openai")
    items = responses_items(history, easy=True)
    items[0] = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": items[0]["content"]},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{IMAGE}",
                "detail": "auto",
            },
            {
                "type": "input_file",
                "filename": "spec.pdf",
                "file_data": f"data:application/pdf;base64,{SPEC}",
            },
        ],
    }
    last_output = max(
        i for i, item in enumerate(items) if item.get("type") == "function_call_output"
    )
    items = items[: last_output + 1]
    items.append(
        {
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "The screenshot shows the failing widget: fix it too.",
                },
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{SCREENSHOT}",
                    "detail": "high",
                },
            ],
        }
    )
    yield (
        "openai_responses_images_user_words",
        "responses.create: plain role messages with input_image and input_file parts, and "
        "the user's new request right after the last tool output",
        openai_call(
            "responses",
            model="gpt-5-mini",
            instructions=history[0]["content"],
            input=items,
            tools=responses_tools(history),
            max_output_tokens=8000,
            reasoning={"effort": "low"},
            store=True,
        ),
    )


KEPT_HEADERS = ("anthropic-beta", "anthropic-version")


def capture(send: Send) -> Json:
    """What one SDK call sent: the path, the headers that shape the request, the body."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(400, json={"error": {"type": "invalid_request_error"}})

    with (
        httpx2.Client(transport=httpx2.MockTransport(handler)) as http,
        contextlib.suppress(anthropic.APIStatusError, openai.APIStatusError),
    ):
        send(http)
    (request,) = seen
    headers = {k: request.headers[k] for k in KEPT_HEADERS if k in request.headers}
    path = request.url.raw_path.decode()
    return {"path": path, "headers": headers, "body": json.loads(request.content)}


def bodies() -> dict[str, Json]:
    """Every body, by name: the SDK and call that sent it, and what it sent."""
    versions = {"anthropic": anthropic.__version__, "openai": openai.__version__}
    out = {}
    for sdk, group in (
        ("anthropic", anthropic_bodies()),
        ("openai", openai_bodies()),
        ("openai", responses_bodies()),
    ):
        for name, what, send in group:
            wire = capture(send)
            out[name] = {"sdk": f"{sdk} {versions[sdk]}", "call": what, **wire}
    return out


def render(body: Json) -> str:
    return json.dumps(body, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for name, body in bodies().items():
        path = OUT / f"{name}.json"
        text = render(body)
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, "utf-8")
            print(f"{path.relative_to(ROOT)}: {len(text):,} bytes")
    if stale:
        print(f"stale: {', '.join(stale)} (run python scripts/capture_sdk_bodies.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
