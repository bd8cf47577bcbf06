"""What an answer is, read from its form rather than its phrases: cut off, a template with
its placeholders, words in no order, or a section that says nothing of the conversation.

- `incomplete`: the answer stops mid-sentence (a provider that says `stop` after cutting
  it): its last line ends on a comma, an open bracket or quote, a dash, or a word that
  cannot end a sentence in the languages our users write.
- `placeholders`: `[what the user wanted]`, `<path of file>`, `{status}`: a template filled
  with descriptions of what would go there.
- `shuffled`: words of the conversation in no order (word salad): its neighbouring words
  are the transcript's neighbours no more often than the same words shuffled.
- `in_sentences`: the answer is written in sentences — capitals open them after a full
  stop or at a line's start, and no article stands before a word an article never stands
  before ("the of", "a is"). A summary of long prose (product documents, PDFs) uses the
  transcript's common pairs as often as a shuffle of itself does, so the pair measure
  alone calls it salad; its grammar says it is not.
- `says_something`: a section body states something of this conversation (an entity, a
  long word or two words found in it beyond the prompt's own), or it is a short "nothing
  here" statement
  (not a first-person one: "I don't know" is no statement about the conversation).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence

from app.core.gate.alignment import PairIndex
from app.core.gate.entities import HistoryText, entities
from app.core.gate.overlap import content_words, words

# Words that end no complete sentence (articles, prepositions, conjunctions, auxiliaries).
_OPEN_ENDINGS_TEXT = (
    "the a an and or but to of in on at for with from by as that which who is are was "
    "were be been has have had will would should can could into than then so if when "
    "while because its their our your my this these those de la le les des du et ou à "
    "pour avec dans sur un une der die das den dem und oder zu mit von für auf ein eine "
    "einer ist el los las y o con por para en del una que é e di da il lo gli per che и в "
    "на с по к от для что"
)
_OPEN_ENDINGS = frozenset(_OPEN_ENDINGS_TEXT.split())
_OPEN_TAIL = re.compile(r"(?:[,:;(\[{\u2014\u2013-]|\s-)\s*$")
_PLACEHOLDER = re.compile(r"\[[^\]\n]{3,120}\]|<[a-z][^>\n]{2,80}>|\{[^}\n]{3,80}\}")
PLACEHOLDER_WORDS = 3
# Word salad: at least this many words (fewer say too little to tell), nearly all the
# conversation's, whose neighbours are rarely the transcript's (under `SALAD_NEIGHBOURS` of
# the pairs) or hardly more often
# than when shuffled (under `SALAD_RATIO` times). A summary's own sentences pair its words
# as the transcript does four to fifteen times as often as shuffled.
SALAD_MIN_WORDS = 60
SALAD_GROUNDED = 0.9
SALAD_NEIGHBOURS = 0.25
SALAD_RATIO = 5.0
SALAD_SHUFFLES = 3
# A "nothing here" statement: at most this many words, with a word of negation.
NONE_MAX_WORDS = 10
_NEGATION_TEXT = (
    "no none nothing not na nil never neither nor pending further keine kein nichts "
    "nicht aucun aucune rien pas ningún ninguna nada nessun nessuna niente nulla нет "
    "ничего nenhum nenhuma"
)
_NEGATION = frozenset(_NEGATION_TEXT.split())
_NEGATION_CJK = ("无", "没有", "無", "なし", "ありません", "없", "未")
_N_A = re.compile(r"\bn/a\b", re.IGNORECASE)
_FIRST_PERSON_TEXT = "i me my i'm ich mir mich je moi yo io mi я мне eu"
_FIRST_PERSON = frozenset(_FIRST_PERSON_TEXT.split())
_FIRST_PERSON_CJK = ("我", "私", "僕", "저는", "나는")
# One word of the conversation this long says something by itself (`pyyaml`, `division`).
LONG_WORD = 6
_ROLE_WORDS = frozenset({"user", "assistant", "tool", "call", "result", "system", "id"})
_STRIP_MARKUP = re.compile(r"[*_`#>|]+")


def incomplete(text: str) -> bool:
    """Whether `text` stops mid-sentence."""
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return False
    last = _STRIP_MARKUP.sub("", lines[-1]).rstrip()
    if last.count("`") % 2 or lines[-1].count("`") % 2:
        return True
    if _OPEN_TAIL.search(last):
        return True
    if last.count("(") > last.count(")") or last.count('"') % 2:
        return True
    tail = words(last)
    return bool(tail) and len(tail) >= 3 and tail[-1] in _OPEN_ENDINGS and last[-1].isalpha()


def placeholders(text: str) -> list[str]:
    """The bracketed descriptions of `text` (`[the user's goal]`): three words or more."""
    return [
        m.group()
        for m in _PLACEHOLDER.finditer(text)
        if len(words(m.group())) >= PLACEHOLDER_WORDS and not re.match(r"\[[✓x ]\]", m.group())
    ]


def shuffled(tokens: Sequence[str], vocabulary: frozenset[str], index: PairIndex) -> bool:
    """Whether `tokens` are the conversation's words in no order."""
    if len(tokens) < SALAD_MIN_WORDS:
        return False
    if sum(t in vocabulary for t in tokens) < SALAD_GROUNDED * len(tokens):
        return False
    seen = _neighbours(tokens, index)
    rng = random.Random(len(tokens))
    baseline = 0.0
    for _ in range(SALAD_SHUFFLES):
        mixed = list(tokens)
        rng.shuffle(mixed)
        baseline += _neighbours(mixed, index) / SALAD_SHUFFLES
    return seen < SALAD_NEIGHBOURS or seen < SALAD_RATIO * baseline


# Sentences: one capital opening a sentence or a line every this many words at least, and
# at most this share of the articles followed by a word no article precedes. Summaries
# open one every 17 to 28 words with no such article; word salad one every 65 or fewer,
# with a tenth to a fifth of its articles misplaced.
SENTENCE_WORDS = 40
MISPLACED_SHARE = 0.05
_ARTICLES_TEXT = "the a an this these those its their our every each"
_ARTICLES = frozenset(_ARTICLES_TEXT.split())
_NEVER_AFTER_TEXT = (
    "the a an of to in on and or is are was were be by for with at from that which as it"
)
_NEVER_AFTER_ARTICLE = frozenset(_NEVER_AFTER_TEXT.split())
_SENTENCE_START = re.compile(r"[.!?]\s+[A-Z]|^\s*(?:[-*+]\s+|\d+[.)]\s+)?[A-Z]", re.MULTILINE)


def in_sentences(text: str) -> bool:
    """Whether `text` reads as written sentences, not words in no order."""
    tokens = words(text)
    if not tokens:
        return False
    starts = len(_SENTENCE_START.findall(text))
    if starts * SENTENCE_WORDS < len(tokens):
        return False
    articles = [i for i, t in enumerate(tokens) if t in _ARTICLES]
    misplaced = sum(
        1 for i in articles if i + 1 == len(tokens) or tokens[i + 1] in _NEVER_AFTER_ARTICLE
    )
    return misplaced <= MISPLACED_SHARE * len(articles)


def _neighbours(tokens: Sequence[str], index: PairIndex) -> float:
    pairs = list(itertools.pairwise(tokens))
    return sum(p in index.places for p in pairs) / len(pairs) if pairs else 0.0


def says_something(body: str, history: HistoryText, instructions: frozenset[str]) -> bool:
    """Whether `body` states something of the conversation, or is a plain "none"."""
    if any(history.sources(e) for e in entities(body)):
        return True
    said = [
        w
        for w in content_words(words(body))
        if w not in instructions and w not in _ROLE_WORDS and history.holds_word(w)
    ]
    distinct = set(said)
    return (
        len(distinct) >= 2 or any(len(w) >= LONG_WORD for w in distinct) or is_none_statement(body)
    )


def is_none_statement(body: str) -> bool:
    """Short statements, one a line, that there is nothing here ("None.", "Nothing further
    is pending.", "Keine Fehler.", "**Stack**: not shown"), none in the first person."""
    lines = [line for line in body.splitlines() if words(line)]
    return bool(lines) and all(_says_none(line) for line in lines)


def _says_none(body: str) -> bool:
    tokens = words(body)
    if not tokens or len(tokens) > NONE_MAX_WORDS:
        return False
    if any(t in _FIRST_PERSON for t in tokens) or any(c in body for c in _FIRST_PERSON_CJK):
        return False
    return (
        any(t in _NEGATION for t in tokens)
        or any(c in body for c in _NEGATION_CJK)
        or _N_A.search(body) is not None
    )
