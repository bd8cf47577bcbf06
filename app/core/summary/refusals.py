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
    r"|desculp(?:e|a)|lamento|sinto\s+muito|perd[ãa]o|mi\s+dispiace|scusa(?:te)?|mi\s+scuso"
    r"|죄송(?:합니다|하지만|해요)|미안합니다|извините|простите|прошу\s+прощения|мне\s+жаль"
).replace("{_Q}", _Q)
_ALAS = (
    r"unfortunately|regrettably|lamentablemente|desafortunadamente|leider|malheureusement"
    r"|残念ながら|infelizmente|purtroppo|к\s+сожалению|안타깝게도"
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
    rf"|(?:am\s+|{_Q}m\s+)?(?:unable|not\s+able|not\s+in\s+a\s+position)\s+to"
    rf"|{_Q}d\s+rather\s+not|would\s+rather\s+not|(?:am|{_Q}m)\s+not\s+comfortable)"
    rf"(?:\s+and\s+(?:will\s+not|won{_Q}t|cannot|can{_Q}t))?(?:\s+be)?(?:\s+{_REQUEST_VERB}|\s*(?:[.!,;]|$))"
    rf"|(?:must|will|{_Q}ll|(?:am|{_Q}m)\s+going\s+to|have\s+to|need\s+to)\s+"
    rf"(?:respectfully\s+)?(?:have\s+to\s+)?(?:decline|refrain)"
    rf"|(?:do\s+not|don{_Q}t)\s+have\s+(?:the\s+)?(?:ability|access|capability|permission)"
    rf"|(?:{_Q}m|am)\s+not\s+going\s+to\s+{_REQUEST_VERB}"
    rf"|do\s+not\s+feel\s+comfortable|don{_Q}t\s+feel\s+comfortable"
)
# First person, from the start of the sentence, after an optional apology or "alas", or
# after a clause ("As an AI language model, I cannot"), never after a colon (a quote).
_REFUSAL_EN = (
    r"(?:[^.!?:\"“”\n]{0,80}?[,;]\s*(?:so\s+|but\s+)?)?"
    rf"(?:i\s*(?:{_Q}m|\s+am)?\s*(?:afraid\s+(?:that\s+)?i\s*)?(?:really\s+|simply\s+)?(?:{_CANT})"
    r"|this\s+(?:request|conversation|content)\s+(?:violates|goes\s+against|cannot)"
    rf"|it(?:{_Q}s|\s+is)\s+not\s+(?:possible|appropriate)\s+for\s+me"
    rf"|i?\s*(?:can{_Q}?t|cannot|won{_Q}t)\s+do\s+(?:it|that|this)\b"
    r"|i\s+(?:have\s+to|must|need\s+to)\s+say\s+no)"
)
_ES_VERB = (
    r"ayud|asist|resum|proporcion|cumpl|complet|proces|gener"
    r"|respond|ofrec|atend|satisfac|realiz|crear|hacer(?:lo)?\b"
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
    rf"\s+(?:te\s+|le\s+|lo\s+)?(?:{_ES_VERB})|debo\s+(?:rechazar|declinar)"
    r"|no\s+(?:me\s+)?es\s+posible\s+(?:resum|ayud|asist|proporcion|ofrec|atend|cumpl)"
    rf"|(?:\w+\s+)?(?:ich\s+(?:kann|werde|möchte|darf)|(?:kann|werde|möchte|darf)\s+ich)\b[^.!?\n]{{0,60}}?\b(?:nicht|kein\w*)\b"
    rf"[^.!?\n]{{0,40}}?\b(?:{_DE_VERB})"
    r"|(?:es\s+ist\s+mir|mir\s+ist\s+es)\b[^.!?\n]{0,20}?\bnicht\s+m[öo]glich"
    r"|ich\s+bin\s+nicht\s+in\s+der\s+lage|ich\s+muss\b[^.!?\n]{0,40}?\bablehnen"
    r"|das\s+kann\s+ich\s+nicht"
    rf"|je\s+ne\s+(?:peux|puis|suis\s+pas\s+en\s+mesure\s+d[e']?)\s*(?:pas\s+)?"
    rf"(?:vous\s+|te\s+|l[ae]\s+|l{_Q})?(?:{_FR_VERB})"
    rf"|je\s+(?:refuse|ne\s+vais\s+pas|ne\s+veux\s+pas|ne\s+souhaite\s+pas)\s+(?:de\s+|d{_Q})?"
    rf"(?:vous\s+|te\s+|l[ae]\s+|l{_Q})?(?:{_FR_VERB})"
    rf"|(?:(?:ce|il)\s+n{_Q}est\s+)?pas\s+possible\s+(?:pour\s+moi\s+)?d[e']\s*(?:{_FR_VERB})"
    r"|il\s+m{_Q}est\s+impossible|je\s+dois\s+(?:refuser|d[ée]cliner)"
    rf"|[^。！？\n]{{0,20}}?我(?:无法|不能|没法|沒法|没有办法|不可以|無法|不會|不会)(?:{_ZH_VERB})"
    r"|[^。！？\n]{0,20}?我?(?:帮|幫|做|处理|處理|总结|總結)不了"
    r"|[^。\n]{0,30}?(?:お手伝い|手伝|要約|まとめ|対応|ご要望|ご依頼|リクエスト|お応え|応じ|提供|回答"
    r"|支援|協力)[^。\n]{0,15}?(?:できません|いたしかねます|致しかねます|できかねます|しかねます)"
    r"|(?:それ|これ|そちら|その(?:ご)?(?:依頼|要求|リクエスト))は?(?:できません|いたしかねます|お受けできません)"
    r"|n[ãa]o\s+(?:posso|consigo|sou\s+capaz\s+de|vou|irei|quero)\s+(?:te\s+|lhe\s+)?(?:ajud|resum|fornec"
    r"|atend|faz|cri|ger|process|complet|respond)"
    r"|non\s+(?:posso|riesco\s+a|sono\s+in\s+grado\s+di)\s+(?:ti\s+|vi\s+|la\s+)?(?:aiut"
    r"|riassum|fornir|crea|gener|elabor|rispond|complet|soddisf|far)"
    r"|[^.。\n]{0,30}?(?:요약|도와|도움|제공|처리|응답|답변|지원|작성|해\s*드릴|해\s*드리)[^.。\n]{0,15}?수\s*없(?:습니다|어요)"
    r"|(?:я\s+)?не\s+(?:могу|смогу|в\s+состоянии|буду|стану)\s+(?:вам\s+|тебе\s+|это\s+)?(?:помочь|помогать"
    r"|подвести|резюмировать|суммировать|обобщить|предоставить|выполнить|сделать|создать"
    r"|ответить|обработать|составить)"
).replace("{_Q}", _Q)
_LEAD = (
    rf"(?:(?:{_SORRY}|{_ALAS})[\s,.!，。、！が]*"
    r"(?:but|pero|sino|aber|mais|mas|ma|но|但是?|但|하지만)?[\s,，]*)?"
)
# A clause before the refusal ("作为一个AI语言模型，", "Entschuldigung, dabei"), never a colon.
_CLAUSE = (
    r"(?:[^.!?:。！？\"“”«»「」\n]{0,80}?[,;，；、]\s*(?:but\s+|so\s+|pero\s+|aber\s+|mais\s+)?)?"
)
# The model speaking of itself or asking for the conversation: never a summary's sentence.
_SELF = (
    r"[^\n]*?(?:\b(?:violate|violates|against|breach)\s+my\s+(?:usage\s+|content\s+|safety\s+|ethical\s+)?(?:policies|policy|guidelines"
    r"|programming|principles)\b"
    rf"|\bi{_Q}?m\s+(?:just\s+|only\s+)?an?\s+(?:ai|language\s+model)\b"
    rf"|\b(?:you{_Q}d|you\s+would|you)\s+(?:like|want)\s+me\s+to\s+summari[sz]e"
    rf"|\bnot\s+something\s+i(?:{_Q}m|\s+am)?\s+(?:can|able|comfortable|willing)"
    rf"|\bsomething\s+i\s+(?:cannot|can{_Q}t|won{_Q}t|will\s+not)"
    r"|\b(?:beyond|outside)\s+(?:what|the\s+scope\s+of\s+what)\s+i\b)"
    r"|^(?:please\s+)?(?:provide|share|paste|send)\s+(?:me\s+)?(?:with\s+)?(?:the|your)\s+"
    r"(?:conversation|transcript|chat|messages|history)"
)
_REFUSAL = re.compile(
    rf"^{_LEAD}{_CLAUSE}(?:{_REFUSAL_EN}|{_REFUSAL_OTHER})|{_SELF}", re.IGNORECASE
)
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
    r"|overloaded[\W_]*$|request\s+timed\s+out|connection\s+error\b"
    # a status line of the provider: `HTTP 500: internal error`, `status: 529 overloaded`
    r"|(?:http\S*\s+|status:?\s+)?[45]\d\d\b[\s:\-]*(?:internal|bad\s+gateway|service"
    r"|gateway|too\s+many|overloaded|error|unauthorized|forbidden)"
    r"|no\s+healthy\s+upstream|upstream\s+connect\s+error"
    r"|(?:prompt|input)\s+is\s+too\s+long"  # the provider refusing the prompt's size
)
# A service failing, wherever it stands in the sentence.
_PROVIDER_ERROR = (
    r"(?:upstream|provider|gateway|backend|api)\s+(?:request\s+)?(?:failed|error|timed?\s*out)"
    r"|request\s+failed|(?:model|server|service|engine)\s+(?:is\s+)?(?:currently\s+)?overloaded"
    r"|overloaded_error|try\s+again\s+later|rate\s+limit(?:ed)?\b|too\s+many\s+requests"
    r"|(?:insufficient|exceeded\s+(?:your\s+)?current)\s+quota|quota\s+exceeded"
    r"|maximum\s+context\s+length|context_length_exceeded|(?:invalid|incorrect)\s+api\s+key"
    r"|internal\s+server\s+error|service\s+(?:is\s+)?(?:temporarily\s+)?unavailable|bad\s+gateway"
    # the SDKs' exceptions and the APIs' error codes
    r"|\b(?:RateLimit|APIConnection|APITimeout|APIStatus|InternalServer|ServiceUnavailable"
    r"|Overloaded|Authentication|PermissionDenied)Error\b|error\s+code:?\s*[45]\d\d"
    r"|model_not_found|invalid_api_key|insufficient_quota|rate_limit_exceeded"
    r"|credit\s+balance\s+is\s+too\s+low|check\s+your\s+plan\s+and\s+billing"
    r"|exceed\w*\s+the\s+maximum\s+(?:token|context)|\d{3}\s+overloaded"
    r"|servicio\s+(?:temporalmente\s+)?no\s+disponible|dienst\s+(?:vor[üu]bergehend\s+)?nicht"
    r"\s+verf[üu]gbar|service\s+(?:temporairement\s+)?indisponible"
    r"|サービスが(?:一時的に)?(?:利用できません|ご利用いただけません)|服务暂时不可用"
    r"|gateway\s+time-?out|an?\s+(?:unexpected\s+)?error\s+(?:has\s+)?occurred"
    r"|something\s+went\s+wrong|failed\s+to\s+(?:generate|process)\s+(?:the\s+|your\s+)?"
    r"(?:request|response|completion)"
    r"|请稍后(?:再|重)试|稍后再试|服务(?:器)?(?:繁忙|不可用|错误|暂时不可用)|请求失败|内部错误"
    r"|(?:int[ée]ntalo|vuelve\s+a\s+intentarlo)\s+(?:de\s+nuevo\s+)?m[aá]s\s+tarde"
    r"|error\s+interno\s+del\s+servidor|la\s+solicitud\s+fall[oó]"
    r"|versuchen\s+sie\s+es\s+sp[äa]ter|interner\s+serverfehler|anfrage\s+fehlgeschlagen"
    r"|r[ée]essayez\s+plus\s+tard|erreur\s+interne\s+du\s+serveur|la\s+requ[êe]te\s+a\s+[ée]chou[ée]"
    r"|しばらく(?:して|経って)から|サーバーエラー|リクエストに失敗|過負荷"
    # a request the service could not process, or one to send again, in each language
    r"|(?:while|when)\s+processing\s+(?:your|this)\s+request|at\s+(?:full\s+)?capacity"
    r"|(?:retry|resend)\s+(?:your|the)\s+request|context\s+(?:length|window)\s+exceeded"
    r"|al\s+procesar\s+(?:tu|su)\s+solicitud|bei\s+der\s+verarbeitung\s+(?:ihrer|deiner)"
    r"\s+anfrage|lors\s+du\s+traitement\s+de\s+(?:votre|ta)\s+(?:demande|requ[êe]te)"
    r"|ao\s+processar\s+(?:sua|tua)\s+solicita[çc][ãa]o|durante\s+l['’]elaborazione\s+della"
    r"\s+richiesta|при\s+обработке\s+(?:вашего\s+)?запроса|повторите\s+попытку"
    r"|요청을\s*처리하는\s*중|다시\s*시도해\s*주세요|リクエストの処理中|もう一度お試しください"
    r"|处理(?:您的|你的)?请求时|系统繁忙|请求过于频繁"
)
_ERROR = re.compile(rf"^(?:{_ERROR_OPENING})|{_PROVIDER_ERROR}", re.IGNORECASE | re.MULTILINE)
_MARKUP = re.compile(r"^[\s#>*_\-+•]*(?:\d{1,2}[.)]\s*)?(?:\*\*|__)?\s*")
# A line this long may have been wrapped (a heading or a label is shorter).
_WRAP_WIDTH = 60
# Lines no text wraps onto: a heading, a table row, a code fence, a rule.
_BLOCK_START = re.compile(r"^\s*(?:#|\||```|---|\*\*[^*]+\*\*\s*$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_QUOTES = "\"'`“‘「『«„"


@dataclass(frozen=True)
class Speech:
    """A sentence that is not summary: its `kind` (`refusal`, `apology`, `error_message`)
    and the words that show it (`span`), to look for in the conversation."""

    kind: str
    sentence: str
    span: str


def _paragraph_lines(text: str) -> Iterator[str]:
    """The lines of `text`, a line that goes on with the sentence of the one before (it
    opens in lower case, the one before ends without a full stop: markdown's soft wrap)
    joined to it, so that a sentence is not cut where its line is."""
    held = ""
    for line in text.splitlines():
        wraps = (
            line.lstrip()[:1].islower()
            and len(held.strip()) >= _WRAP_WIDTH
            and not held.rstrip().endswith((".", "!", "?", ":"))
        )
        if held and wraps and not _BLOCK_START.match(held):
            held = f"{held} {line.strip()}"
            continue
        if held:
            yield held
        held = line
    if held:
        yield held


def sentences(text: str) -> Iterator[str]:
    """Each sentence of `text` without list, heading and bold markup before it."""
    for line in _paragraph_lines(text):
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
