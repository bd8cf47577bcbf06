"""The summary check: answers of several model families that are not summaries, each with
its reason, whether alone, under the template's headings or beside a real summary, in six
languages; and real summaries (quoting errors, refusals and reasoning tags they saw) that
pass, cleaned of what is not theirs."""

from __future__ import annotations

import pytest

from app.core.gate.check import (
    SummarySource,
    accept_summary,
    check_summary,
    has_heading,
    signal_failure,
    source_of,
    stop_failure,
)
from app.core.ports import SummaryRequest
from app.core.summary.extractive import extract_summary
from app.core.summary.prompt import SUMMARY_SYSTEM
from app.core.summary.reasons import CONTENT_FAILURES
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.summary_answers import (
    ARCHIVED,
    ISSUE_ANSWERS,
    SECTION_TITLES,
    SUMMARY,
    request,
)

SOURCE = source_of(request())
ARCHIVED_SOURCE = source_of(request("archived"))


def words(text: str) -> int:
    return len(text.split())


def check(
    text: str, template: str = "sections", cap: int = 10_000, source: SummarySource | None = None
) -> str | None:
    failure = check_summary(
        text,
        template=template,  # type: ignore[arg-type]
        cap_tokens=cap,
        count=words,
        source=source,
    )
    return None if failure is None else failure.reason


def judged(text: str, template: str = "sections") -> str | None:
    """The reason `text` fails as an answer about the test conversation, or None."""
    source = ARCHIVED_SOURCE if template == "archived" else SOURCE
    return check(text, template, source=source)


def accepted(text: str, template: str = "sections") -> str:
    source = ARCHIVED_SOURCE if template == "archived" else SOURCE
    verdict = accept_summary(
        text,
        template=template,  # type: ignore[arg-type]
        cap_tokens=10_000,
        count=words,
        source=source,
    )
    assert isinstance(verdict, str), verdict
    return verdict


# Answers seen from real models (and their servers) instead of a summary.
REFUSALS = {
    "openai": "I'm sorry, but I can't help with that.",
    "openai-curly": "I’m sorry, but I can’t assist with that request.",
    "openai-short": "I can't help with that.",
    "anthropic": "I apologize, but I cannot assist with summarizing this conversation.",
    "anthropic-decline": "I must respectfully decline to produce this summary.",
    "llama": "I cannot provide a summary of this conversation as it contains sensitive data.",
    "llama-fulfill": "I can't fulfill that request.",
    "qwen": "Sorry, but I can't assist with that.",
    "mistral": "I'm unable to assist with that request.",
    "gemini": "I'm just a language model, so I can't help you with that.",
    "gemini-able": "I'm not able to help with that, as I'm only a language model.",
    "legacy": "As an AI language model, I cannot summarize private conversations.",
    "afraid": "I'm afraid I can't do that.",
    "comfortable": "I don't feel comfortable summarizing this content.",
}
APOLOGIES = {
    "openai": "I apologize for the confusion. Could you please provide the conversation?",
    "llama": "I'm sorry for any misunderstanding. Let me know what you need.",
    "gemini": "Sorry, something about this request is unclear to me.",
    "unfortunately": "Unfortunately, the conversation you provided appears to be empty.",
}
ERRORS = {
    "vllm-text": "Error: The model `qwen2.5-coder:32b` does not exist.",
    "vllm-json": '{"object":"error","message":"The model `x` does not exist.","code":404}',
    "ollama-json": '{"error":"model \\"llama3\\" not found, try pulling it first"}',
    "model": "The model `gpt-5-mini` does not exist or you do not have access to it.",
    "gateway-html": "<html><body><h1>502 Bad Gateway</h1></body></html>",
    "gateway-text": "Internal Server Error",
    "traceback": 'Traceback (most recent call last):\n  File "server.py", line 1',
    "rate": "Rate limit exceeded. Please try again later.",
    "occurred": "An error occurred while processing your request.",
    "upper": "ERROR 404: model not found",
}


@pytest.mark.parametrize("text", REFUSALS.values(), ids=REFUSALS.keys())
def test_refusals_of_every_model_family_are_refusals(text: str) -> None:
    assert check(text) == "refusal"
    assert check(text, "archived") == "refusal"
    assert judged(text) == "refusal"


@pytest.mark.parametrize("text", APOLOGIES.values(), ids=APOLOGIES.keys())
def test_apologies_without_a_summary_are_apologies(text: str) -> None:
    assert check(text) == "apology"
    assert judged(text) == "apology"


@pytest.mark.parametrize("text", ERRORS.values(), ids=ERRORS.keys())
def test_error_messages_as_text_are_error_messages(text: str) -> None:
    assert check(text) == "error_message"
    assert judged(text) == "error_message"


@pytest.mark.parametrize("name", ISSUE_ANSWERS)
def test_every_answer_of_the_issue_fails_with_its_reason(name: str) -> None:
    text, reason = ISSUE_ANSWERS[name]
    template = "archived" if "archived" in name else "sections"
    assert reason in CONTENT_FAILURES
    assert judged(text, template) == reason


# Sentences that are not summary, in the languages users of such models write; none is
# an answer of the issue, and none of their words are in the test conversation.
REFUSAL_SENTENCES = {
    "en-unable": "I'm unable to produce a summary of this conversation.",
    "en-wont": "Sorry, I won't be able to summarize that.",
    "en-as-ai": "As an AI, I cannot create this summary.",
    "zh-cannot": "很抱歉，我不能提供这段对话的摘要。",
    "zh-unable": "我无法完成这个请求。",
    "zh-no-way": "对不起，我没有办法总结这些内容。",
    "es-cannot": "Lo siento, no puedo resumir esta conversación.",
    "es-afraid": "Me temo que no puedo ayudarte con esa solicitud.",
    "es-alas": "Lamentablemente, no me es posible completar este resumen.",
    "de-sorry": "Tut mir leid, aber ich kann diese Unterhaltung nicht zusammenfassen.",
    "de-unable": "Ich bin nicht in der Lage, diese Anfrage zu erfüllen.",
    "de-alas": "Leider kann ich dabei nicht helfen.",
    "fr-sorry": "Désolé, je ne peux pas résumer cette conversation.",
    "fr-unable": "Je ne suis pas en mesure de répondre à cette demande.",
    "fr-impossible": "Il m'est impossible de produire ce résumé.",
    "ja-sorry": "申し訳ございませんが、このリクエストにはお応えできません。",
    "ja-cannot": "この会話を要約することはできかねます。",
    "ja-help": "すみません、お手伝いできません。",
}
APOLOGY_SENTENCES = {
    "en": "My apologies for the confusion earlier.",
    "zh": "不好意思，刚才的回答有误。",
    "es": "Disculpa la confusión anterior.",
    "de": "Entschuldigung für das Missverständnis.",
    "fr": "Toutes mes excuses pour ce malentendu.",
    "ja": "ごめんなさい、先ほどの回答は間違っていました。",
    "zh-unspaced": "抱歉给您带来不便。",
    "ja-ga": "申し訳ありませんが、先ほどの回答は誤りでした。",
}
ERROR_SENTENCES = {
    "en-later": "The service is temporarily busy, please try again later.",
    "en-rate": "Rate limit reached for requests on this organization.",
    "en-code": "Error code: 529 - overloaded",
    "en-context": "This request exceeds the maximum context length of the model.",
    "zh": "服务器繁忙，请稍后再试。",
    "es": "Error interno del servidor, inténtalo más tarde.",
    "de": "Interner Serverfehler. Bitte versuchen Sie es später erneut.",
    "fr": "Erreur interne du serveur, réessayez plus tard.",
    "ja": "サーバーエラーが発生しました。しばらくしてからお試しください。",
}
STYLES = {
    "markdown": "## {title}\n{body}",
    "h3": "### {title}\n{body}",
    "bold": "**{title}**\n{body}",
    "numbered": "{n}. {title}\n{body}",
    "colon": "{title}:\n{body}",
}


def bodies_of(summary: str) -> list[str]:
    """SUMMARY's section bodies, in order."""
    return [part.split("\n", 1)[1].strip() for part in summary.split("## ")[1:]]


BODIES = bodies_of(SUMMARY)


def summary_with(style: str, bodies: list[str]) -> str:
    form = STYLES[style]
    return "\n".join(
        form.format(title=t, body=b, n=n)
        for n, (t, b) in enumerate(zip(SECTION_TITLES, bodies, strict=True), start=1)
    )


def placed(sentence: str, style: str, position: str) -> str:
    if position == "alone":
        return sentence
    bodies = list(BODIES)
    if position == "first-section":
        bodies[0] = sentence
    elif position == "after-content":
        bodies[4] = f"{bodies[4]}\n{sentence}"
    elif position == "mid-paragraph":
        bodies[3] = f"Done: pyyaml installed from the second mirror. {sentence}"
    else:
        bodies = [sentence] * len(bodies)
    return summary_with(style, bodies)


POSITIONS = ("alone", "first-section", "after-content", "mid-paragraph", "every-section")
KINDS = (
    [("refusal", k, s) for k, s in REFUSAL_SENTENCES.items()]
    + [("apology", k, s) for k, s in APOLOGY_SENTENCES.items()]
    + [("error_message", k, s) for k, s in ERROR_SENTENCES.items()]
)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("kind", "sentence"), [(k, s) for k, _, s in KINDS], ids=[f"{k}-{i}" for k, i, _ in KINDS]
)
def test_a_refusal_apology_or_error_fails_wherever_it_stands(
    kind: str, sentence: str, style: str, position: str
) -> None:
    answer = placed(sentence, style, position)
    assert judged(answer) == kind
    assert check(answer) == kind  # without the conversation too


@pytest.mark.parametrize("style", STYLES)
def test_the_real_summary_passes_in_every_heading_style(style: str) -> None:
    text = summary_with(style, BODIES)
    assert accepted(text) == text


def test_real_summaries_of_both_templates_pass_unchanged() -> None:
    assert accepted(SUMMARY) == SUMMARY.strip()
    assert accepted(ARCHIVED, "archived") == ARCHIVED.strip()


@pytest.mark.parametrize(
    "extra",
    [
        # the user's own task holds a refusal: reported, or quoted as the conversation has it
        "- The bot must answer off-topic questions with: I'm sorry, I can't help with that.",
        "I'm sorry, I can't help with that.",
        # an error the agent met, quoted without markup
        "- The first mirror said: Service Unavailable.",
        "Error: 503 Service Unavailable from the package mirror, so a second one was used.",
        "Error: ModuleNotFoundError: No module named 'yaml', fixed by installing pyyaml.",
        # the agent's own words about the task, in the first person, are no refusal
        "- I can't reproduce the parser bug on Windows yet.",
        "- No puedo reproducir el error del parser en Windows.",
        "- Ich kann den Fehler im Parser unter Windows nicht reproduzieren.",
        "- Je ne peux pas reproduire le bug du parser sous Windows.",
        "- 我无法在 Windows 上复现 parser 的问题。",
    ],
)
def test_a_summary_quoting_what_the_conversation_holds_passes(extra: str) -> None:
    text = SUMMARY.replace("## File Operations", f"{extra}\n## File Operations")
    assert accepted(text) == text.strip()


def test_a_reasoning_tag_the_conversation_never_names_is_dropped_as_foreign() -> None:
    extra = "- The `<think>` tags of the model output are left to the caller."
    text = SUMMARY.replace("## File Operations", f"{extra}\n## File Operations")
    assert accepted(text) == SUMMARY.strip()


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("Error: The model `qwen2.5-coder:32b` does not exist.", "error_message"),
        ("- Upstream request failed: the model is overloaded.", "error_message"),
        ("Sorry, I can't finish this summary.", "refusal"),
        ("I apologize for the incomplete answer above.", "apology"),
    ],
)
def test_an_answer_beside_a_real_summary_still_fails(extra: str, reason: str) -> None:
    assert judged(SUMMARY + extra) == reason
    assert judged(SUMMARY.replace("## Tool Calls", f"{extra}\n## Tool Calls")) == reason


def test_the_same_quote_is_an_answer_when_the_conversation_does_not_hold_it() -> None:
    text = SUMMARY.replace(
        "## File Operations", "I'm sorry, I can't help with that.\n## File Operations"
    )
    other = SummarySource.of(SOURCE.instructions.joined, "the user asked to fix src/parser.py")
    assert check(text, source=other) == "refusal"


@pytest.mark.parametrize(
    "wrapped",
    [
        "<think>\nThe user wants the five sections. Let me list the files.\n</think>\n{s}",
        "<thinking>plan: read the tool calls</thinking>\n\n{s}",
        "<reasoning>\nfirst the goals\n</reasoning>\n{s}<think>more</think>",
        "The template opened the block.\nSo I write the summary now.\n</think>\n{s}",
        "<|im_start|>assistant\n{s}<|im_end|>\n<|im_start|>user\nthanks",
        "<|start_header_id|>assistant<|end_header_id|>\n\n{s}<|eot_id|>",
        "[INST] {s} [/INST]",
    ],
)
def test_reasoning_and_template_tokens_are_removed_from_a_real_summary(wrapped: str) -> None:
    assert accepted(wrapped.format(s=SUMMARY)) == SUMMARY.strip()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<think>\n" + SUMMARY, "reasoning_only"),  # never closed
        ("<reasoning>the summary would be long</reasoning>", "reasoning_only"),
        (SUMMARY + "\n<thinking>\nwait, I should check the files again", "reasoning_only"),
        ("<|im_start|>assistant\n<|im_end|>", "empty"),
        ("\u200b\u200d\ufeff", "empty"),
        ("\n".join(f"## {t}\n\u200b\u2060" for t in SECTION_TITLES), "empty_sections"),
        ("<|eot_id|>" + "".join(f"## {t}\n" for t in SECTION_TITLES), "empty_sections"),
    ],
)
def test_reasoning_without_an_answer_and_template_leaks_fail(text: str, reason: str) -> None:
    assert judged(text) == reason


def test_an_echo_of_part_of_the_instructions_is_an_echo() -> None:
    # each section's description written under it, as the prompt words it
    from app.core.summary.prompt import DIMENSIONS

    text = "\n".join(f"## {title}\n{what}" for title, what in DIMENSIONS)
    assert judged(text) == "echo"


def test_a_copy_of_the_transcript_is_a_copy() -> None:
    from app.core.summary.prompt import serialize_for_summary

    transcript = serialize_for_summary(request().messages)
    sections = "\n".join(f"## {t}\n" for t in SECTION_TITLES[:-1])
    assert judged(f"{sections}## Errors & Resolutions\n{transcript}") == "copy"
    assert judged(transcript) == "copy"


@pytest.mark.parametrize(
    "body",
    [
        "placeholder text goes here, more placeholder content follows soon",
        "Quisque velit nisi, pretium ut lacinia in, elementum id enim.",
        "TODO: fill in this section later with relevant details",
    ],
)
def test_filler_under_every_heading_is_filler(body: str) -> None:
    text = "\n".join(f"## {t}\n{body} ({n})" for n, t in enumerate(SECTION_TITLES))
    assert judged(text) == "filler"


@pytest.mark.parametrize(
    "text",
    [
        "## Goals & Decisions\n" + "parser " * 300,
        "\n".join(f"## {t}\nok ok ok ok ok ok ok ok ok ok ok ok" for t in SECTION_TITLES),
        SUMMARY + "\n" + "pyyaml mirror " * 400,
    ],
)
def test_a_few_words_repeated_are_repetitive(text: str) -> None:
    assert judged(text) == "repetitive"


def test_sections_that_all_say_none_are_empty_sections() -> None:
    text = "\n".join(f"## {t}\n- None." for t in SECTION_TITLES)
    failure = check_summary(text, template="sections", cap_tokens=1000, count=words)
    assert failure is not None
    assert str(failure) == ("[empty_sections] 0 of 5 sections say more than none (at least 1 must)")


def test_a_summary_may_say_none_where_the_history_has_nothing_of_the_kind() -> None:
    text = SUMMARY
    for old in BODIES[3:]:
        text = text.replace(old, "- None.")
    assert accepted(text) == text.strip()


def test_none_under_file_operations_when_files_were_read_says_nothing() -> None:
    text = SUMMARY.replace(BODIES[1], "- None.")
    assert judged(text) == "says_nothing"


def test_a_summary_in_another_language_of_an_english_conversation_passes() -> None:
    bodies = [
        "- 修复 `src/parser.py` 中失败的解析器测试。",
        "- 读取了 `src/parser.py`，它调用 `yaml.safe_load`。",
        "- `pytest -q tests/test_parser.py`：test_parse_empty 因 ModuleNotFoundError 失败。",
        "- 已从第二个镜像安装 pyyaml，所有解析器测试通过。",
        "- 缺少 yaml 模块：安装 pyyaml 后解决。",
    ]
    text = summary_with("markdown", bodies)
    assert accepted(text) == text


def test_missing_sections_are_named() -> None:
    text = SUMMARY.split("## Task Status")[0]
    failure = check_summary(text, template="sections", cap_tokens=1000, count=words)
    assert failure is not None
    assert str(failure) == (
        "[missing_sections] the answer lacks the sections: Task Status, Errors & Resolutions"
    )


def test_prose_without_any_heading_is_no_sections() -> None:
    assert check("The user wanted to fix a bug; the agent edited main.py.") == "no_sections"
    # a heading of the other template does not count
    assert check("### 🎯 Objectives & Status\n* done") == "no_sections"


def test_the_archived_template_has_its_own_headings() -> None:
    assert judged(ARCHIVED, "archived") is None
    assert judged(ARCHIVED) == "no_sections"
    assert has_heading("### 📂 File System State (Snapshot)", "archived")
    assert not has_heading(ARCHIVED, "sections")


def test_a_heading_word_in_prose_is_not_a_heading() -> None:
    assert not has_heading("Goals were set by the user and met.", "sections")
    assert not has_heading("Goals were set: by the user, and met in the end.", "sections")


@pytest.mark.parametrize("text", ["", "   \n\t", "\n\n", "\u200b"])
def test_empty_text_is_empty(text: str) -> None:
    assert check(text) == "empty"


def test_a_summary_over_the_cap_is_oversized() -> None:
    assert check(SUMMARY, cap=words(SUMMARY)) is None
    assert check(SUMMARY, cap=words(SUMMARY) - 1) == "oversized"


def test_megabytes_are_oversized_without_being_counted() -> None:
    counted: list[int] = []

    def count(text: str) -> int:
        counted.append(len(text))
        return 1

    huge = "## Goals & Decisions\n" + "x" * 10_000_000
    failure = check_summary(huge, template="sections", cap_tokens=8192, count=count)
    assert failure is not None
    assert (failure.reason, failure.retryable, counted) == ("oversized", False, [])
    assert str(failure) == "[oversized] summary over 8192 tokens"


@pytest.mark.parametrize(
    ("stop", "reason", "message"),
    [
        ("length", "truncated", "summary cut off at max_tokens"),
        ("max_tokens", "truncated", "summary cut off at max_tokens"),
        ("pause_turn", "truncated", "the model paused its turn before the summary ended"),
        ("refusal", "refusal", "the model refused to summarize"),
        ("content_filter", "filtered", "the summary was filtered by the server"),
        ("tool_calls", "tool_calls", "the model called a tool instead of summarizing"),
        ("function_call", "tool_calls", "the model called a tool instead of summarizing"),
        ("tool_use", "tool_calls", "the model called a tool instead of summarizing"),
    ],
)
def test_stop_reasons_that_mean_failure(stop: str, reason: str, message: str) -> None:
    failure = stop_failure(stop)
    assert failure is not None
    assert (failure.reason, failure.retryable, str(failure)) == (
        reason,
        False,
        f"[{reason}] {message}",
    )


@pytest.mark.parametrize("stop", ["stop", "end_turn", "stop_sequence", None, 3])
def test_normal_stop_reasons_are_not_failures(stop: object) -> None:
    assert stop_failure(stop) is None


def test_provider_signals_are_failures_of_their_own() -> None:
    assert str(signal_failure("refusal")) == "[refusal] the model refused to summarize"
    assert signal_failure("tool_calls").reason == "tool_calls"


def test_a_summary_that_carries_the_previous_one_forward_is_no_copy() -> None:
    """A later chunk (or compaction) starts with the summary so far as a user message; the
    new summary may repeat it almost word for word and add the new step."""
    from dataclasses import replace

    from app.core.assemble import summary_message
    from tests.builders import assistant, parse, user

    earlier = request()
    later = replace(
        earlier,
        messages=(
            summary_message(SUMMARY),
            *parse([user("Now run the linters."), assistant("ruff check: all clean.")]),
        ),
    )
    text = SUMMARY.replace("## Errors", "- Then: ruff check, all clean.\n## Errors")
    verdict = accept_summary(
        text, template="sections", cap_tokens=10_000, count=words, source=source_of(later)
    )
    assert verdict == text.strip()


def test_bracketed_code_the_history_has_is_quoted_not_a_placeholder() -> None:
    """A summary that lists a multi-line command whole quotes its list comprehensions; the
    same brackets nowhere in the history are a template's blanks."""
    edit = (
        "edit 10:12\n    missing = [elem for elem in required if elem not in ds]\n"
        "    names = [name.upper() for name in missing if name]\nend_of_edit"
    )
    messages = parse(
        [
            user("Fix the crash in the pixel handler when an element is missing."),
            assistant("Editing the handler.", tool_use("bash", "t1", command=edit)),
            tool_result("t1", "File updated."),
            assistant("Done: the handler lists the missing elements."),
        ]
    )
    text = extract_summary(messages, 1200)
    assert "[elem for elem in required if elem not in ds]" in text
    summary_request = SummaryRequest(
        messages=tuple(messages), system=SUMMARY_SYSTEM, prompt="", max_words=1200
    )
    source = source_of(summary_request)
    assert check(text, source=source) is None
    blanks = text.replace("elem for elem in required if elem not in ds", "the list of names")
    blanks = blanks.replace("name.upper() for name in missing if name", "what it returns here")
    assert check(blanks, source=source) == "placeholder"
