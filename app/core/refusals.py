"""What a model says when it does not summarize: refusals, apologies and provider errors, in
the languages its users write (English, Chinese, Spanish, German, French, Japanese).

A refusal speaks to the reader about the request itself, in the first person ("I can't
help with that", "抱歉，我无法总结", "Lo siento, no puedo ayudar", "Es tut mir leid, ich
kann dabei nicht helfen", "Je ne peux pas", "要約することはできません"); an apology opens with
one ("I'm sorry", "申し訳ありません"); a provider error names the service failing ("Upstream
request failed", "model overloaded, try again later", "请稍后再试"). Each sentence is judged
on its own, wherever it stands, so a refusal under a heading is found as well as one
alone. A sentence that opens with a quotation mark or a code span is a quotation; whether
an unquoted one is history (a quote of the conversation) is the caller's call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_Q = r"(?:'|’)"
_SORRY = (
    rf"i{_Q}?m\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|i\s+am\s+(?:so\s+|very\s+)?sorry"
    r"|sorry|i\s+apologi[sz]e|my\s+apologies|apologies"
    r"|lo\s+siento|lo\s+lamento|disculp(?:a|e|as|en)|perd[oó]n"
    r"|es\s+tut\s+mir\s+leid|tut\s+mir\s+leid|entschuldigung|ich\s+entschuldige\s+mich"
    r"|je\s+suis\s+(?:vraiment\s+|sinc[eè]rement\s+)?d[ée]sol[ée]e?|d[ée]sol[ée]e?"
    r"|je\s+m{_Q}excuse|toutes\s+mes\s+excuses"
    r"|很抱歉|非常抱歉|抱歉|对不起|對不起|不好意思"
    r"|申し訳(?:ありません|ございません|ない)|すみません|ごめんなさい|恐れ入りますが"
).replace("{_Q}", _Q)
_ALAS = (
    r"unfortunately|regrettably|lamentablemente|desafortunadamente|leider|malheureusement"
    r"|残念ながら"
)
# Inability is a refusal when it is about the request (help, summarize, provide, do that)
# or ends the clause ("I can't."); "I can't reproduce the bug" is a report of the task.
_REQUEST_VERB = (
    r"(?:be\s+able\s+to\s+)?(?:help|assist|summari[sz]|provid|comply|complet|finish|fulfil|creat"
    r"|produc|continu|process|generat|answer|respond|support|shar|writ|engag|participat"
    r"|perform|giv|offer|handl|proceed|accommodat|do\b|be\s+of|go\s+along|honou?r|this|that)"
)
_CANT = (
    rf"(?:can{_Q}?t|cannot|can\s+not|won{_Q}t|will\s+not|could\s+not|couldn{_Q}?t"
    rf"|(?:am\s+|{_Q}m\s+)?(?:unable|not\s+able)\s+to)(?:\s+{_REQUEST_VERB}|\s*(?:[.!,;]|$))"
    rf"|must\s+(?:respectfully\s+)?decline|(?:have|need)\s+to\s+decline"
    rf"|(?:{_Q}m|am)\s+not\s+going\s+to\s+{_REQUEST_VERB}"
    rf"|do\s+not\s+feel\s+comfortable|don{_Q}t\s+feel\s+comfortable"
)
# First person, from the start of the sentence, after an optional apology or "alas", or
# after a clause ("As an AI language model, I cannot"), never after a colon (a quote).
_REFUSAL_EN = (
    r"(?:[^.!?:\n]{0,80}?[,;]\s*(?:so\s+|but\s+)?)?"
    rf"(?:i\s*(?:{_Q}m|\s+am)?\s*(?:afraid\s+(?:that\s+)?i\s*)?(?:really\s+|simply\s+)?(?:{_CANT})"
    r"|this\s+(?:request|conversation|content)\s+(?:violates|goes\s+against|cannot))"
)
_ES_VERB = (
    r"ayud|asist|resum|proporcion|cumpl|complet|hacer\s+(?:eso|esto)|proces|gener"
    r"|respond|ofrec|atend|satisfac|realiz|crear"
)
_DE_VERB = (
    r"helfen|zusammenfassen|erfüllen|unterstützen|bereitstellen|beantworten|bearbeiten"
    r"|nachkommen|erstellen|liefern|durchführen|tun|machen|geben|anbieten|verarbeiten"
)
_FR_VERB = (
    r"aider|assister|résumer|resumer|fournir|répondre|repondre|traiter|satisfaire"
    r"|donner|produire|faire|accéder|acceder|créer|creer|compléter|completer|rédiger"
    r"|rediger"
)
_ZH_VERB = (
    r"帮|幫|协助|協助|提供|完成|总结|總結|概括|处理|處理|满足|滿足|回答"
    r"|参与|參與|生成|进行|進行|为你|为您|為您|执行|執行|撰写"
)
_REFUSAL_OTHER = (
    r"(?:me\s+temo\s+que\s+)?no\s+"
    r"(?:puedo|podr[ée]|me\s+es\s+posible|estoy\s+en\s+condiciones\s+de)"
    rf"\s+(?:{_ES_VERB})|debo\s+(?:rechazar|declinar)"
    rf"|(?:ich\s+kann|kann\s+ich)\b[^.!?\n]{{0,60}}?\bnicht\s+(?:{_DE_VERB})"
    r"|ich\s+bin\s+nicht\s+in\s+der\s+lage|ich\s+muss\b[^.!?\n]{0,40}?\bablehnen"
    r"|das\s+kann\s+ich\s+nicht"
    rf"|je\s+ne\s+(?:peux|puis|suis\s+pas\s+en\s+mesure\s+d[e']?)\s*(?:pas\s+)?(?:{_FR_VERB})"
    r"|il\s+m{_Q}est\s+impossible|je\s+dois\s+(?:refuser|d[ée]cliner)"
    rf"|我(?:无法|不能|没法|沒法|没有办法|不可以|無法|不會|不会)(?:{_ZH_VERB})"
    r"|[^。\n]{0,30}?(?:お手伝い|手伝|要約|まとめ|対応|ご要望|ご依頼|リクエスト|お応え|応じ|提供|回答"
    r"|支援|協力)[^。\n]{0,15}?(?:できません|いたしかねます|致しかねます|できかねます)"
).replace("{_Q}", _Q)
_LEAD = rf"(?:(?:{_SORRY}|{_ALAS})[\s,.!，。、！が]*(?:but|pero|sino|aber|mais|但是?|但)?[\s,，]*)?"
_REFUSAL = re.compile(rf"^{_LEAD}(?:{_REFUSAL_EN}|{_REFUSAL_OTHER})", re.IGNORECASE)
# An apology word ends a word, or is Chinese or Japanese (no spaces there).
_APOLOGY = re.compile(
    rf"^(?:{_SORRY})(?:\b|(?=[\s,.!，。、！が])|(?<=[\u3040-\u30ff\u4e00-\u9fff]))", re.IGNORECASE
)
# "Unfortunately, …" opens an apology only in an answer that is nothing else.
_ALAS_OPENING = re.compile(rf"^(?:{_SORRY}|{_ALAS})", re.IGNORECASE)
_ERROR_OPENING = (
    r"error\b\s*(?:[:\-\d(]|code)"  # Error: ..., ERROR 404, error(500), error code
    r"|\{\s*\"(?:error|detail|object\"\s*:\s*\"error)"  # a JSON error body as text
    r"|<(?:!doctype|html)"  # a gateway's HTML page
    r"|traceback\s+\(most\s+recent\s+call\s+last\)"
    r"|(?:the\s+)?model\s+\S+\s+(?:does\s+not\s+exist|not\s+found|is\s+not\s+available)"
)
# A service failing, wherever it stands in the sentence.
_PROVIDER_ERROR = (
    r"(?:upstream|provider|gateway|backend|api)\s+(?:request\s+)?(?:failed|error|timed?\s*out)"
    r"|request\s+failed|(?:model|server|service|engine)\s+(?:is\s+)?(?:currently\s+)?overloaded"
    r"|overloaded_error|try\s+again\s+later|rate\s+limit(?:ed)?\b|too\s+many\s+requests"
    r"|(?:insufficient|exceeded\s+(?:your\s+)?current)\s+quota|quota\s+exceeded"
    r"|maximum\s+context\s+length|context_length_exceeded|(?:invalid|incorrect)\s+api\s+key"
    r"|internal\s+server\s+error|service\s+(?:temporarily\s+)?unavailable|bad\s+gateway"
    r"|gateway\s+time-?out|an?\s+(?:unexpected\s+)?error\s+(?:has\s+)?occurred"
    r"|something\s+went\s+wrong|failed\s+to\s+(?:generate|process)\s+(?:the\s+|your\s+)?"
    r"(?:request|response|completion)"
    r"|请稍后(?:再|重)试|稍后再试|服务(?:器)?(?:繁忙|不可用|错误|暂时不可用)|请求失败|内部错误"
    r"|(?:int[ée]ntalo|vuelve\s+a\s+intentarlo)\s+(?:de\s+nuevo\s+)?m[aá]s\s+tarde"
    r"|error\s+interno\s+del\s+servidor|la\s+solicitud\s+fall[oó]"
    r"|versuchen\s+sie\s+es\s+sp[äa]ter|interner\s+serverfehler|anfrage\s+fehlgeschlagen"
    r"|r[ée]essayez\s+plus\s+tard|erreur\s+interne\s+du\s+serveur|la\s+requ[êe]te\s+a\s+[ée]chou[ée]"
    r"|しばらく(?:して|経って)から|サーバーエラー|リクエストに失敗|過負荷"
)
_ERROR = re.compile(rf"^(?:{_ERROR_OPENING})|{_PROVIDER_ERROR}", re.IGNORECASE | re.MULTILINE)
_MARKUP = re.compile(r"^[\s#>*_\-+•]*(?:\d{1,2}[.)]\s*)?(?:\*\*|__)?\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_QUOTES = "\"'`“‘「『«„"


@dataclass(frozen=True)
class Speech:
    """A sentence that is not summary: its `kind` (`refusal`, `apology`, `error_message`)
    and the words that show it (`span`), to look for in the conversation."""

    kind: str
    sentence: str
    span: str


def sentences(text: str) -> Iterator[str]:
    """Each sentence of `text` without list, heading and bold markup before it."""
    for line in text.splitlines():
        line = _MARKUP.sub("", line).strip()
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if part:
                yield part


def speech_in(sentence: str) -> Speech | None:
    """What `sentence` says when it refuses, apologizes or reports a failing service; None
    for anything else, and for a sentence that opens with a quotation."""
    if sentence[:1] in _QUOTES:
        return None
    found = _REFUSAL.match(sentence)
    if found:
        return Speech("refusal", sentence, sentence[found.start() :])
    found = _ERROR.search(sentence)
    if found:
        # an error that opens the sentence is shown by the whole sentence ("Error: …")
        span = sentence[found.start() :] if found.start() == 0 else found.group()
        return Speech("error_message", sentence, span)
    found = _APOLOGY.match(sentence)
    if found:
        return Speech("apology", sentence, sentence)
    return None


def label_opening(opening: str) -> str | None:
    """An answer made of one message, by its opening line: as `speech_in`, and also an
    apology that opens with "Unfortunately" or its equivalents."""
    speech = speech_in(opening)
    if speech is not None:
        return speech.kind
    return "apology" if _ALAS_OPENING.match(opening) else None
