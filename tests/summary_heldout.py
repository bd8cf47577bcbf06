"""Answers no earlier test spelled, written as a hostile reviewer would: refusals, apologies
and provider errors in other phrasings and ten languages; and the places to put one in an
answer (alone, under one heading or all of them, bold, quoted, after a real section)."""

from __future__ import annotations

import random
from collections.abc import Callable

from app.core.summary.prompt import DIMENSIONS, serialize_for_summary
from tests.builders import assistant, tool_result, tool_use, user
from tests.summary_answers import SECTION_TITLES, SUMMARY, request

# Sentences a model writes instead of a summary, none of them spelled in the other tests.
REFUSALS = {
    "en-wont-be": "I won't be summarizing this conversation.",
    "en-position": "I'm not in a position to summarize this conversation.",
    "en-as-an-ai-access": "As an AI, I do not have access to the conversation.",
    "en-ability": "I don't have the ability to summarize this content.",
    "en-guidelines": "This request goes against my guidelines, so I will not produce a summary.",
    "en-unfortunately": "Unfortunately I can't provide a summary here.",
    "en-refrain": "I'll have to refrain from summarizing this.",
    "en-not-possible-for-me": "It's not possible for me to summarize this conversation.",
    "en-fulfil": "I am unable to fulfil this request.",
    "en-create": "I'm not able to create that summary for you.",
    "en-decline": "I'm going to decline this request.",
    "en-policies": "Summarizing this would violate my usage policies.",
    "en-ask-for-input": "Please provide the conversation you'd like me to summarize.",
    "zh-traditional": "抱歉，我無法協助總結這段對話。",
    "zh-no-subject": "很抱歉，无法为您提供这段对话的摘要。",
    "zh-cannot-meet": "对不起，我不能满足你的要求。",
    "zh-as-an-ai": "作为一个AI语言模型，我无法总结这段对话。",
    "es-hacer": "No puedo hacer un resumen de esta conversación.",
    "es-ayudarte": "Lo siento, no puedo ayudarte con eso.",
    "es-impersonal": "Lamentablemente, no es posible resumir esta conversación.",
    "de-impersonal": "Es ist mir leider nicht möglich, diese Unterhaltung zusammenzufassen.",
    "de-dabei": "Entschuldigung, dabei kann ich Ihnen nicht helfen.",
    "de-keine": "Ich bedaure, aber ich kann keine Zusammenfassung erstellen.",
    "fr-impossible": "Désolé, il m'est impossible de résumer cette conversation.",
    "fr-vous-aider": "Je ne peux pas vous aider avec cette demande.",
    "fr-impersonal": "Malheureusement, ce n'est pas possible de produire un résumé.",
    "ja-dekimasen": "この会話を要約することはできません。",
    "ja-okotae": "申し訳ございませんが、そのリクエストにはお応えできません。",
    "ja-shikanemasu": "申し訳ありませんが、ご要望にはお応えしかねます。",
    "pt-ajudar": "Desculpe, mas não posso ajudar com isso.",
    "pt-consigo": "Lamento, não consigo resumir esta conversa.",
    "it-aiutarti": "Mi dispiace, ma non posso aiutarti con questa richiesta.",
    "it-in-grado": "Non sono in grado di riassumere questa conversazione.",
    "ko-dowa": "죄송하지만 이 요청은 도와드릴 수 없습니다.",
    "ko-yoyak": "이 대화를 요약할 수 없습니다.",
    "ru-pomoch": "Извините, но я не могу помочь с этим запросом.",
    "ru-itog": "К сожалению, я не могу подвести итог этого разговора.",
    # a second round, written after the first was fixed
    "en-something-i-cannot": "Regrettably, summarizing this transcript is something I cannot do.",
    "en-not-something": "That's not something I can help with.",
    "en-rather-not": "I'd rather not summarize this conversation.",
    "en-comply": "Sorry, I'm unable to comply.",
    "en-cannot-and-will-not": "I cannot and will not summarize this.",
    "en-beyond": "This is beyond what I'm able to do.",
    "en-not-something-able": "Summarizing this conversation is not something I'm able to do.",
    "en-not-comfortable": "I'm not comfortable producing this summary.",
    "en-nope": "Nope, can't do it.",
    "en-say-no": "I have to say no to this request.",
    "en-outside": "That request is outside what I can help with.",
    "zh-cannot-help-traditional": "對不起，這個我幫不了。",
    "zh-object-first": "这个请求我无法处理。",
    "es-no-voy": "Perdón, pero no voy a resumir esto.",
    "es-condiciones": "No estoy en condiciones de ayudarte con esto.",
    "de-das-kann-ich": "Das kann ich leider nicht tun.",
    "de-werde": "Ich werde diese Unterhaltung nicht zusammenfassen.",
    "fr-refuse": "Je refuse de résumer cette conversation.",
    "fr-ne-vais-pas": "Je ne vais pas résumer cette conversation.",
    "ja-sore-wa": "それはできません。",
    "pt-nao-vou": "Não vou resumir esta conversa.",
    "it-farlo": "Non posso farlo.",
    "ko-haedeuril": "그건 해드릴 수 없어요.",
    "ru-ne-budu": "Я не буду это резюмировать.",
}
ERRORS = {
    "json-overloaded": '{"error": {"message": "overloaded", "type": "overloaded_error"}}',
    "json-server-error": (
        '{"error": {"message": "The server had an error while processing your request. '
        'Sorry about that!"}}'
    ),
    "html-503": (
        "<html><head><title>503 Service Unavailable</title></head><body><center><h1>503 "
        "Service Unavailable</h1></center><hr><center>nginx</center></body></html>"
    ),
    "html-503-lines": (
        "<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n"
        "<h1>503 Service Temporarily Unavailable</h1>\n</body>\n</html>"
    ),
    "rate-limit": "You have exceeded your rate limit. Please slow down.",
    "rate-429": "429 Too Many Requests",
    "rate-reached": (
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min. Limit: 30000."
    ),
    "context-length": (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 210000 tokens."
    ),
    "context-exceeded": "Error: context length exceeded (prompt is too long: 220000 tokens)",
    "prompt-too-long": "prompt is too long: 215000 tokens > 200000 maximum",
    "input-too-long": "Input is too long for requested model.",
    "overloaded-word": "Overloaded",
    "capacity": "The model is currently at capacity. Please retry your request later.",
    "timed-out": "Request timed out.",
    "bad-gateway": "502 Bad Gateway",
    "gateway-timeout": "504 Gateway Time-out",
    "cloudflare": "Error code 524: A timeout occurred",
    "connection": "Connection error: the connection was reset by peer.",
    "zh-busy": "系统繁忙，请稍后重试。",
    "zh-frequent": "请求过于频繁，请稍后再试",
    "es-procesar": "Se ha producido un error al procesar tu solicitud.",
    "de-verarbeitung": "Bei der Verarbeitung Ihrer Anfrage ist ein Fehler aufgetreten.",
    "fr-traitement": "Une erreur s'est produite lors du traitement de votre demande.",
    "ja-retry": "エラーが発生しました。もう一度お試しください。",
    "pt-processar": "Ocorreu um erro ao processar sua solicitação.",
    "it-elaborazione": "Si è verificato un errore durante l'elaborazione della richiesta.",
    "ko-processing": "요청을 처리하는 중 오류가 발생했습니다.",
    "ru-processing": "Произошла ошибка при обработке запроса.",
    # a second round, written after the first was fixed
    "service-is-unavailable": "Service is temporarily unavailable, please retry.",
    "http-500": "HTTP 500: internal error",
    "status-529": "status: 529 overloaded",
    "sdk-exception": "openai.RateLimitError: Error code: 429",
    "credit-balance": "Your credit balance is too low to access the Anthropic API.",
    "quota-billing": (
        "You exceeded your current quota, please check your plan and billing details."
    ),
    "error-code-name": "model_not_found: The model `gpt-9` does not exist",
    "envoy": (
        "upstream connect error or disconnect/reset before headers. reset reason: "
        "connection termination"
    ),
    "no-healthy-upstream": "no healthy upstream",
    "token-limit": "The request was rejected because it exceeded the maximum token limit.",
    "es-unavailable": "Servicio no disponible temporalmente.",
    "de-unavailable": "Dienst vorübergehend nicht verfügbar.",
    "fr-unavailable": "Service temporairement indisponible.",
    "ja-unavailable": "サービスが一時的に利用できません。",
}

_FIRST_BULLET = (
    "- Fix the failing parser tests in `src/parser.py`; off-topic questions get a fixed reply."
)


def every_heading(body: str) -> str:
    return "\n".join(f"## {title}\n{body}" for title in SECTION_TITLES)


def _after_first_section(body: str) -> str:
    head, rest = SUMMARY.split("## File Operations")
    return f"{head}{body}\n## File Operations{rest}"


# Where a sentence goes in an answer.
PLACES: dict[str, Callable[[str], str]] = {
    "alone": lambda s: s,
    "under-one-heading": lambda s: f"## Goals & Decisions\n{s}",
    "under-every-heading": every_heading,
    "as-the-first-section": lambda s: SUMMARY.replace(_FIRST_BULLET, s),
    "after-a-real-section": _after_first_section,
    "bold": lambda s: every_heading(f"**{s}**"),
    "blockquote": lambda s: every_heading(f"> {s}"),
    "italic-under-title": lambda s: f"# Summary\n\n_{s}_",
}


# Real summaries that must pass, each with the conversation it summarizes.
GUARD_CONVERSATION = [
    user(
        "Add a guard to bot/reply.py: the bot must refuse requests that ask for medical "
        'dosage, answering "I can\'t help with that; please ask a doctor."'
    ),
    assistant("Reading the reply module.", tool_use("read_file", "t1", path="bot/reply.py")),
    tool_result("t1", "def reply(text):\n    return llm(text)\n"),
    assistant(
        "Adding the guard.",
        tool_use("edit_file", "t2", path="bot/reply.py", old="return llm(text)", new="guard"),
    ),
    tool_result("t2", "ok"),
    assistant("Added the dosage guard with the fixed refusal text."),
]
GUARD_TAIL = """## File Operations
- `bot/reply.py`: read, then edited to return `REFUSAL` when `is_dosage(text)` holds.
## Tool Calls
- `read_file bot/reply.py`, `edit_file bot/reply.py`.
## Task Status
- Done: the dosage guard is in place.
## Errors & Resolutions
None.
"""
GUARD_SUMMARIES = {
    "reports-the-refusal-task": "## Goals & Decisions\n- The user asked the agent to make "
    "the bot refuse requests that ask for medical dosage, with a fixed refusal reply.\n"
    + GUARD_TAIL,
    "quotes-the-refusal-unmarked": "## Goals & Decisions\n- The bot must refuse dosage "
    "requests by answering: I can't help with that; please ask a doctor.\n" + GUARD_TAIL,
}
CHINESE_CONVERSATION = [
    user("请修复 app/config.py 中的配置加载错误：读取 settings.yaml 时抛出 KeyError: 'database'。"),
    assistant("Reading the config.", tool_use("read_file", "t1", path="app/config.py")),
    tool_result(
        "t1", "def load():\n    return yaml.safe_load(open('settings.yaml'))['database']\n"
    ),
    assistant(
        "Fixing.",
        tool_use(
            "edit_file", "t2", path="app/config.py", old="['database']", new=".get('database', {})"
        ),
    ),
    tool_result("t2", "ok"),
    assistant("已修复：缺少 database 键时返回空字典。"),
]
CHINESE_SUMMARY = """## Goals & Decisions
- 用户要求修复 `app/config.py` 中的配置加载错误（读取 settings.yaml 时抛出 KeyError: 'database'）。
- 决定：缺少 database 键时返回空字典。
## File Operations
- 读取并修改了 `app/config.py`：`['database']` 改为 `.get('database', {})`。
## Tool Calls
- `read_file app/config.py`，`edit_file app/config.py`。
## Task Status
- 已完成。
## Errors & Resolutions
- KeyError: 'database'：通过 `.get` 默认值解决。
"""
ONE_TOOL_CONVERSATION = [
    user("What's in requirements.txt?"),
    assistant("Reading.", tool_use("read_file", "t1", path="requirements.txt")),
    tool_result("t1", "fastapi==0.115\nhttpx==0.28\n"),
]
ONE_TOOL_SUMMARY = """## Goals & Decisions
- The user asked what `requirements.txt` contains.
## File Operations
- Read `requirements.txt`: fastapi 0.115 and httpx 0.28.
## Tool Calls
- `read_file requirements.txt`.
## Task Status
- Answered.
## Errors & Resolutions
None.
"""
RATE_LIMITED_CONVERSATION = [
    user("Deploy the site with ./deploy.sh"),
    assistant("Deploying.", tool_use("bash", "t1", command="./deploy.sh")),
    tool_result(
        "t1",
        "upload failed: 429 Too Many Requests - rate limit exceeded, try again later",
        is_error=True,
    ),
    assistant(
        "The CDN rate-limited us; waiting and retrying.",
        tool_use("bash", "t2", command="sleep 60 && ./deploy.sh"),
    ),
    tool_result("t2", "deployed to https://example.org"),
]
RATE_LIMITED_SUMMARY = """## Goals & Decisions
- Deploy the site with `./deploy.sh`.
## File Operations
None.
## Tool Calls
- `./deploy.sh` failed: the CDN answered 429 Too Many Requests
  (rate limit exceeded, try again later).
- `sleep 60 && ./deploy.sh` deployed to https://example.org.
## Task Status
- Done: deployed.
## Errors & Resolutions
- Rate limit on upload: waited a minute and retried.
"""
# The corpus session `swe-swe-agent-test-repo-i1` (a missing colon), summarized as strong
# models do: in their own words, or from its first message only.
COLON_SUMMARY = """## Goals & Decisions
- Repair a syntax error reported in `missing_colon.py`: the `division` function's signature
  lacked its trailing colon.
## File Operations
- Opened `tests/missing_colon.py` and edited line 4 so the definition ends with a colon.
## Tool Calls
- `find_file` located the module; `python tests/missing_colon.py` then printed 8.2;
  `submit` sent the diff.
## Task Status
- Finished and submitted.
## Errors & Resolutions
- SyntaxError from the missing colon, fixed by the one-line edit.
"""
COLON_PARAPHRASE = """## Goals & Decisions
The repository had a broken Python script; the objective was to make it parse again with a
minimal change.
## File Operations
One script under tests/ was patched in place: the def line of division now terminates properly.
## Tool Calls
Search, open, edit, execution (printed 8.2), submission.
## Task Status
Complete — patch submitted.
## Errors & Resolutions
None beyond the original syntax problem.
"""
COLON_FIRST_MESSAGE = """## Goals & Decisions
- The user showed a demonstration of the interface and asked to fix the issue it describes
  in the repository.
## File Operations
None.
## Tool Calls
None yet.
## Task Status
Not started: no command has been run.
## Errors & Resolutions
None.
"""

_HEAD, _TOOL_CALLS = SUMMARY.split("## Tool Calls")
# A real summary (`SUMMARY`) wrapped in what is not part of it: reasoning in other
# spellings, and other chat templates' tokens. Each answer is the summary once cleaned.
WRAPPED = {
    "thinking": "<thinking>\nThe user wants the parser work.\n</thinking>\n" + SUMMARY,
    "analysis-tag": "<analysis>\nThe user wants a summary.\n</analysis>\n" + SUMMARY,
    "tag-with-attributes": '<think type="internal">\nplanning\n</think>\n' + SUMMARY,
    "seed-think": "<seed:think>\nplanning\n</seed:think>\n" + SUMMARY,
    "begin-of-thought": "<|begin_of_thought|>\nThe user wants a summary.\n<|end_of_thought|>\n"
    + "<|begin_of_solution|>\n"
    + SUMMARY
    + "<|end_of_solution|>",
    "magistral": "[THINK]The user wants a summary. I should list the files.[/THINK]\n" + SUMMARY,
    "harmony": "<|channel|>analysis<|message|>We need to summarize. The user fixed the parser."
    "<|end|><|start|>assistant<|channel|>final<|message|>" + SUMMARY + "<|return|>",
    "harmony-without-end": "<|channel|>analysis<|message|>We need to summarize."
    "<|start|>assistant<|channel|>final<|message|>" + SUMMARY,
    "nested": "<think>\nouter\n<think>\ninner\n</think>\nmore\n</think>\n" + SUMMARY,
    "in-the-middle": _HEAD
    + "<think>\nwait, the tool calls again\n</think>\n## Tool Calls"
    + _TOOL_CALLS,
    "inline": "<think>The user wants a summary.</think> " + SUMMARY,
    "upper-case": "<THINK>\nplanning\n</THINK>\n" + SUMMARY,
    "llama3": "<|start_header_id|>assistant<|end_header_id|>\n\n" + SUMMARY + "<|eot_id|>",
    "llama3-invented-user-turn": SUMMARY
    + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nthanks",
    "gemma": "<start_of_turn>model\n" + SUMMARY + "<end_of_turn>",
    "gemma-invented-user-turn": SUMMARY + "<end_of_turn>\n<start_of_turn>user\nthanks",
    "mistral": "[/INST] " + SUMMARY + "</s>",
    "mistral-prompt-repeated": "[INST] Summarize the conversation [/INST]" + SUMMARY,
    "phi": "<|assistant|>\n" + SUMMARY + "<|end|>",
    "phi-invented-user-turn": SUMMARY + "<|end|>\n<|user|>\nthanks",
    "deepseek": "<｜Assistant｜>" + SUMMARY + "<｜end▁of▁sentence｜>",
    "deepseek-invented-user-turn": SUMMARY + "<｜end▁of▁sentence｜><｜User｜>continue",
    "deepseek-think": "<｜Assistant｜><think>\nplan\n</think>\n" + SUMMARY,
    "chatml-invented-user-turn": SUMMARY + "<|im_end|>\n<|im_start|>user\nThanks!<|im_end|>",
}
# Reasoning that never reached its answer, in the same spellings.
REASONING_ONLY = {
    "thinking-wraps-summary": "<thinking>\n" + SUMMARY + "\n</thinking>",
    "analysis-wraps-summary": "<analysis>\n" + SUMMARY + "\n</analysis>",
    "reasoning-unclosed": "<reasoning>\nlet me consider\n" + SUMMARY,
    "begin-of-thought-unclosed": "<|begin_of_thought|>\nThe user wants a summary. " + SUMMARY,
    "magistral-unclosed": "[THINK]The user wants a summary. " + SUMMARY,
    "harmony-analysis-only": "<|channel|>analysis<|message|>We need to summarize.\n"
    + SUMMARY
    + "<|end|>",
    "harmony-unclosed": "<|channel|>analysis<|message|>We need to summarize the parser work",
    "unclosed-in-the-middle": _HEAD
    + "<think>\nwait, let me reconsider\n## Tool Calls"
    + _TOOL_CALLS,
}

_TRANSCRIPT = serialize_for_summary(request().messages)
_INSTRUCTIONS = request().prompt.split("<conversation>")[0]


def _dropped(text: str, picks: list[int]) -> str:
    tokens = text.split(" ")
    for pick in picks:
        tokens[pick % len(tokens)] = ""
    return " ".join(tokens)


def _edited(text: str, share: float, seed: int = 1) -> str:
    """`text` with about `share` of its words dropped or given an `s`, its heading lines
    kept (a seeded draw: the same text every run)."""
    draw = random.Random(seed)
    lines = []
    for line in text.split("\n"):
        kept = []
        for word in line.split(" "):
            r = 1.0 if "##" in line else draw.random()
            if r >= share / 2:
                kept.append(word + "s" if r < share else word)
        lines.append(" ".join(kept))
    return "\n".join(lines)


# Echoes of the prompt, its template or its transcript, in other forms than the tests spell.
ECHOES = {
    "prompt-with-a-fifth-of-its-words-changed": (_edited(request().prompt, 0.2), "echo"),
    "prompt-with-a-quarter-of-its-words-changed": (_edited(request().prompt, 0.25), "echo"),
    # found by hypothesis: the numbered `N. ## Title: what it holds` lines carry most of it
    "instructions-four-words-dropped": (_dropped(_INSTRUCTIONS, [0, 105, 161, 310, 4121]), "echo"),
    "prompt-misspelt": (
        request().prompt.replace("the", "teh").replace("summary", "sumary"),
        "echo",
    ),
    "instructions-upper-case": (_INSTRUCTIONS.upper(), "echo"),
    "instructions-reworded": (
        _INSTRUCTIONS.replace("Summarize", "Please summarise")
        .replace("exactly", "precisely")
        .replace("Every", "Each")
        .replace("important", "key"),
        "echo",
    ),
    "template-fill-in": (every_heading("<fill in>"), "empty_sections"),
    "template-todo": (every_heading("[TODO]"), "empty_sections"),
    "template-ellipsis": (every_heading("..."), "empty_sections"),
    "template-n-a": (every_heading("N/A"), "empty_sections"),
    "template-tbd": (every_heading("- TBD\n- TBD"), "empty_sections"),
    "template-descriptions-bracketed": (
        "\n".join(f"## {title}\n[{what}]" for title, what in DIMENSIONS),
        "echo",
    ),
    "template-descriptions": ("\n".join(f"## {t}\n{what}" for t, what in DIMENSIONS), "echo"),
    "transcript-roles-renamed": (
        _TRANSCRIPT.replace("[user]", "USER:").replace("[assistant]", "AI:"),
        "copy",
    ),
    "transcript-under-headings": (every_heading(_TRANSCRIPT[:600]), "copy"),
}
FILLERS = {
    "lorem-variant": (
        every_heading(
            "Lorem ipsum dolor sit amet, consectetuer adipiscing elit. Aenean commodo ligula "
            "eget dolor. Aenean massa. Cum sociis natoque penatibus et magnis dis parturient."
        ),
        "filler",
    ),
    "cupcake-ipsum": (
        every_heading("Cupcake ipsum dolor sit amet gummies. Halvah tart pastry sweet roll."),
        "filler",
    ),
    "random-english": (
        every_heading(
            "The quick brown fox jumps over the lazy dog while purple elephants dance under "
            "moonlight near the river bank."
        ),
        "filler",
    ),
    "greek-letters": (every_heading("alpha beta gamma delta epsilon zeta eta theta"), "filler"),
    "placeholder-words": (every_heading("xxx xxx xxx yyy"), "repetitive"),
    "emoji-only": (every_heading("🚀 ✅ 🎉 👍"), "empty_sections"),
    "zero-width-only": (every_heading("\u200b\u200b"), "empty_sections"),
    "direction-marks-only": (every_heading("\u200f\u200e\u200f"), "empty_sections"),
    "wide-spaces-only": (every_heading("\u00a0\u00a0\u3000"), "empty_sections"),
    "punctuation-only": (every_heading("---\n***\n..."), "empty_sections"),
    "empty-bullets": (every_heading("-\n-\n- ?!"), "empty_sections"),
    "one-word": (every_heading("parser"), "empty_sections"),
    "numbered-lines": (
        "## Goals & Decisions\n"
        + "\n".join(f"- Item {i}: value {i * 7} recorded." for i in range(300))
        + "\n"
        + "\n".join(f"## {t}\n- Item 1: value 7 recorded." for t in SECTION_TITLES[1:]),
        "filler",
    ),
    "one-true-line-under-every-heading": (
        every_heading("Tests were fixed in src/parser.py."),
        "repetitive",
    ),
}

# `SUMMARY` written in other languages or in the agent's first person, reporting the same
# errors in their own words ("se produjo un error", "ein Fehler ist aufgetreten"): reports
# of the conversation, not a provider's error.
TRANSLATED_SUMMARIES = {
    "spanish": """## Goals & Decisions
- Arreglar los tests del parser en `src/parser.py`; las preguntas fuera de tema reciben una
  respuesta fija.
## File Operations
- Se leyó `src/parser.py` (usa `yaml.safe_load`).
## Tool Calls
- `pytest -q tests/test_parser.py`: se produjo un error, ModuleNotFoundError para yaml.
- `pip install pyyaml`: el primer mirror respondió 503 Service Unavailable.
## Task Status
- Hecho: pyyaml instalado desde el segundo mirror; todos los tests pasan.
## Errors & Resolutions
- Ocurrió un error de importación (yaml); se resolvió instalando pyyaml.
""",
    "german": """## Goals & Decisions
- Die fehlschlagenden Parser-Tests in `src/parser.py` reparieren.
## File Operations
- `src/parser.py` gelesen (ruft `yaml.safe_load` auf).
## Tool Calls
- `pytest -q tests/test_parser.py`: ein Fehler ist aufgetreten (ModuleNotFoundError: yaml).
- `pip install pyyaml`: der erste Mirror antwortete mit 503 Service Unavailable.
## Task Status
- Erledigt: pyyaml vom zweiten Mirror installiert, alle Tests bestehen.
## Errors & Resolutions
- ModuleNotFoundError für yaml: durch Installation von pyyaml behoben.
""",
    "french": """## Goals & Decisions
- Corriger les tests du parser dans `src/parser.py`.
## File Operations
- Lu `src/parser.py` (appelle `yaml.safe_load`).
## Tool Calls
- `pytest -q tests/test_parser.py` : une erreur s'est produite (ModuleNotFoundError: yaml).
- `pip install pyyaml` : le premier miroir a répondu 503 Service Unavailable.
## Task Status
- Terminé : pyyaml installé depuis le second miroir, tous les tests passent.
## Errors & Resolutions
- ModuleNotFoundError pour yaml : résolu en installant pyyaml.
""",
    "japanese": """## Goals & Decisions
- `src/parser.py` のパーサーテストの失敗を修正する。
## File Operations
- `src/parser.py` を読んだ（`yaml.safe_load` を呼ぶ）。
## Tool Calls
- `pytest -q tests/test_parser.py`：エラーが発生しました（ModuleNotFoundError: yaml）。
- `pip install pyyaml`：最初のミラーは 503 Service Unavailable を返した。
## Task Status
- 完了：2番目のミラーから pyyaml をインストールし、全テストが通った。
## Errors & Resolutions
- yaml の ModuleNotFoundError：pyyaml のインストールで解決。
""",
    "chinese": """## Goals & Decisions
- 修复 `src/parser.py` 中失败的解析器测试。
## File Operations
- 读取了 `src/parser.py`（调用 `yaml.safe_load`）。
## Tool Calls
- `pytest -q tests/test_parser.py`：出现错误 ModuleNotFoundError（没有 yaml 模块）。
- `pip install pyyaml`：第一个镜像返回 503 Service Unavailable。
## Task Status
- 已完成：从第二个镜像安装了 pyyaml，所有测试通过。
## Errors & Resolutions
- yaml 的 ModuleNotFoundError：安装 pyyaml 后解决。
""",
    "first-person-agent": """## Goals & Decisions
- I was asked to fix the failing parser tests in `src/parser.py`.
## File Operations
- I read `src/parser.py`; I did not change any other file.
## Tool Calls
- I ran `pytest -q tests/test_parser.py`; it failed with ModuleNotFoundError. I couldn't
  install pyyaml from the first mirror (503).
## Task Status
- I installed pyyaml from the second mirror and all parser tests pass.
## Errors & Resolutions
- The missing yaml module: I resolved it by installing pyyaml.
""",
}

# Lines a real summary writes about its conversation that read close to a refusal or a
# provider error: each, added to `SUMMARY`, leaves it a summary.
REPORT_LINES = [
    "- The agent could not summarize the log because the file was missing.",
    "- Note: I cannot verify the mirror's status beyond what the tool output shows.",
    "- The user said the bot must not answer off-topic questions; the agent can't change that.",
    "- Decision: don't retry the first mirror; it is not possible to reach it from CI.",
    "- The first mirror was at capacity (503); switched to the second mirror.",
    "- The HTTP 503 from the mirror was resolved by switching mirrors.",
    "- 503 Service Unavailable from the first mirror; the second one worked.",
    "- Unfortunately the first mirror was down; the second one worked.",
    "- The agent won't touch src/parser.py further; it's done.",
    "- No errors remain; nothing else to do.",
    "- The mirror returned an error while processing the request for pyyaml.",
    "- Please provide the mirror URL in the config next time (user preference).",
    "- I'm unable to confirm whether the first mirror is back.",
    '- The bot now answers jokes with "Sorry, I can\'t do that here." and stops.',
]
