"""The context-engineering toolkit: `POST /compress-tool-result`, `POST /preprocess-input`,
`GET /project-rules`, `POST /assemble`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import ToolkitDep
from app.api.dialect import read_messages
from app.api.responses import JsonResponse
from app.api.routing import UNSUPPORTED_MEDIA_TYPE, FastJsonRoute
from app.api.schemas import ErrorResponse
from app.api.toolkit_schemas import (
    AssembleRequest,
    AssembleResponse,
    CompressToolResultRequest,
    CompressToolResultResponse,
    MissingMentionInfo,
    PreprocessInputRequest,
    PreprocessInputResponse,
    ProjectRulesResponse,
)
from app.core.provider import OpenAIForms, dump_as
from app.service.toolkit import AssembleInput, Preprocessed

router = APIRouter(
    route_class=FastJsonRoute,
    tags=["context toolkit"],
    responses={422: {"model": ErrorResponse}},
)


@router.post(
    "/compress-tool-result",
    summary="Compress a tool result for history",
    responses={415: UNSUPPORTED_MEDIA_TYPE},
)
async def compress_tool_result(
    body: CompressToolResultRequest, toolkit: ToolkitDep
) -> CompressToolResultResponse:
    """History keeps a compressed form of the result: `status`, the tool's rule applied
    to `data`, and a full `error`; `text`, `stats` and `context` are dropped. A Read in a
    `session_id` whose file changed since the session's previous read gets `data.note`."""
    limits = body.limits.model_dump(exclude_unset=True) if body.limits else None
    done = await toolkit.compress(
        body.tool,
        body.input,
        body.result,
        is_error=body.is_error,
        session_id=body.session_id,
        limits=limits,
    )
    out = done.compressed
    return CompressToolResultResponse(
        tool=out.tool,
        rule=out.rule,
        result=out.result,
        content=out.content,
        original_chars=out.original_chars,
        compressed_chars=len(out.content),
        warnings=list(done.warnings),
    )


def _preprocessed(done: Preprocessed) -> PreprocessInputResponse:
    return PreprocessInputResponse(
        text=done.text,
        mentions=list(done.mentions),
        reminded=list(done.reminded),
        more_count=done.more_count,
        missing=[MissingMentionInfo(path=m.path, reason=m.reason) for m in done.missing],
        warnings=list(done.warnings),
    )


@router.post(
    "/preprocess-input",
    summary="Add @file reminders to a user input",
    responses={415: UNSUPPORTED_MEDIA_TYPE},
)
async def preprocess_input(
    body: PreprocessInputRequest, toolkit: ToolkitDep
) -> PreprocessInputResponse:
    """Each `@path` that exists in the work directory gets a
    system-reminder appended to the input (no file content); at most `limit` are named,
    then "(and N more…)". An `@` after a letter or digit (an e-mail address) is no mention."""
    done = await toolkit.preprocess(body.text, check_exists=body.check_exists, limit=body.limit)
    return _preprocessed(done)


@router.get("/project-rules", summary="The project's CODE_LAW.md, if any")
async def project_rules(toolkit: ToolkitDep) -> ProjectRulesResponse:
    """The project's rules: `CODE_LAW.md` in any case at the root of the work directory."""
    rules = await toolkit.project_rules()
    return ProjectRulesResponse(
        found=rules.content is not None,
        path=rules.path,
        content=rules.content,
        skipped=rules.skipped,
    )


@router.post(
    "/assemble",
    summary="Assemble a model call's messages in layer order",
    response_model=AssembleResponse,
    responses={415: UNSUPPORTED_MEDIA_TYPE},
)
async def assemble(body: AssembleRequest, toolkit: ToolkitDep) -> Any:
    """The layers of one model call in order: L1 (system + tools), L2 (CODE_LAW.md), L3
    (history), the current input and the todo recap, as a message list in the request's
    format that passes the provider's rules. A history that breaks one gets 422
    `invalid_conversation`."""
    forms = OpenAIForms()
    history, fmt = read_messages(body.messages, body.format, forms)
    request = AssembleInput(
        history=history,
        format=fmt,
        system=body.system,
        tools=body.tools,
        current_input=body.input,
        todo_recap=body.todo_recap,
        rules=body.rules,
        preprocess=body.preprocess,
        forms=forms,
    )
    done = await toolkit.assemble(request)
    each = [dump_as([m], fmt, forms) for m in done.messages]
    layers = [label for sent, label in zip(each, done.layers, strict=True) for _ in sent]
    answer = AssembleResponse(
        messages=[],
        format=fmt,
        layers=layers,
        rules_source=done.rules_source,
        rules_path=done.rules_path,
        mentions=_preprocessed(done.preprocessed) if done.preprocessed else None,
        warnings=done.warnings,
    ).model_dump(mode="json")
    # The messages as dumped, numbers as sent: the model's JSON dump would re-encode them.
    return JsonResponse(answer | {"messages": [item for sent in each for item in sent]})
