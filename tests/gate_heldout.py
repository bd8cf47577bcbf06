"""The held-out answer set of the summary gate: written last, by hand, after its rules were
fixed, on sessions the development set does not use, in kinds and styles it does not have.
Measured once (`python -m bench.gate --set heldout`); the rules were not tuned on it.

Sessions: two corpus sessions the development set leaves out (`swe-swe-agent-test-repo-i1`,
the missing colon again through a demonstration; `marshmallow-1867-xml-cursors`), a
TypeScript session built here, and a session whose user writes German.
"""

from __future__ import annotations

from typing import Any

from tests.builders import assistant, system, tool_result, tool_use, user
from tests.gate_answers import TITLES, Answer, archived, under_archived, under_headings
from tests.gate_sessions import Session, Sheet, corpus

EMPTY_SHEET = Sheet("", "", (), (), "", "", (), ())

JEST_FAIL = (
    "FAIL src/date.test.ts\n  ● formatDate › pads single-digit months\n\n"
    '    Expected: "2024-03-07"\n    Received: "2024-3-7"\n\nTests: 1 failed, 14 passed'
)
TS_RAW: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user("formatDate in src/date.ts must zero-pad months and days. Fix it and keep jest green."),
    assistant("Reading the helper.", tool_use("read_file", "r1", path="src/date.ts")),
    tool_result(
        "r1",
        "export function formatDate(d: Date): string {\n"
        "  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`;\n}\n",
    ),
    assistant("Running jest first.", tool_use("bash", "b1", command="npx jest src/date.test.ts")),
    tool_result("b1", JEST_FAIL, is_error=True),
    assistant(
        "Padding with padStart.",
        tool_use(
            "edit_file",
            "e1",
            path="src/date.ts",
            old_str="${d.getMonth() + 1}-${d.getDate()}",
            new_str="${String(d.getMonth() + 1).padStart(2, '0')}-"
            "${String(d.getDate()).padStart(2, '0')}",
        ),
    ),
    tool_result("e1", "Edited src/date.ts"),
    assistant("Again.", tool_use("bash", "b2", command="npx jest src/date.test.ts")),
    tool_result("b2", "PASS src/date.test.ts\nTests: 15 passed, 15 total"),
    assistant("formatDate now pads months and days; all 15 tests pass."),
]
DE_RAW: list[dict[str, Any]] = [
    system("Du bist ein Coding-Agent."),
    user(
        "Bitte benenne die Funktion berechne_summe in rechner.py in summe um und passe alle "
        "Aufrufe an."
    ),
    assistant(
        "Ich suche die Aufrufe.",
        tool_use("bash", "g1", command="grep -rn berechne_summe ."),
    ),
    tool_result(
        "g1",
        "./rechner.py:3:def berechne_summe(werte):\n./main.py:8:    print(berechne_summe(zahlen))",
    ),
    assistant(
        "Umbenennen.",
        tool_use("bash", "s1", command="sed -i 's/berechne_summe/summe/g' rechner.py main.py"),
    ),
    tool_result("s1", ""),
    assistant("Prüfen.", tool_use("bash", "p1", command="python -m pytest -q")),
    tool_result("p1", "4 passed in 0.12s"),
    assistant("Die Funktion heißt jetzt summe; alle 4 Tests laufen durch."),
]


def sessions() -> list[Session]:
    return [
        Session("i1", corpus("swe-swe-agent-test-repo-i1.anthropic.json"), EMPTY_SHEET),
        Session(
            "xml", corpus("swe-marshmallow-code-marshmallow-1867-xml-cursors.anthropic.json"),
            EMPTY_SHEET,
        ),
        Session("ts", TS_RAW, EMPTY_SHEET),
        Session("de", DE_RAW, EMPTY_SHEET),
    ]  # fmt: skip


def _ans(
    session: str, kind: str, good: bool, sections: str, archived: str, digest: tuple[str, str]
) -> Answer:
    return Answer(session, kind, good, sections, archived, digest)


# Good answers, one body per section, by session.
GOOD: dict[str, list[str]] = {
    "i1": [
        "Fix the missing colon on the `def division` line of `tests/missing_colon.py`.",
        "`tests/missing_colon.py` was opened and line 4 edited to end with a colon.",
        '`find_file "missing_colon.py"` located it; `python tests/missing_colon.py` ran clean.',
        "Fixed and submitted; nothing further is pending.",
        "The syntax error from the missing colon, fixed by the edit of line 4.",
    ],
    "xml": [
        "TimeDelta serialization truncated 345 ms to 344; rounding was chosen over int().",
        "Created `reproduce.py`, edited line 1475 of `src/marshmallow/fields.py`, removed "
        "`reproduce.py` afterwards.",
        "`set_cursors 1475 1475` then an edit; `python reproduce.py` printed 345; `rm "
        "reproduce.py`; `submit`.",
        "Submitted. Nothing further is pending.",
        "An E999 IndentationError on the first edit, fixed by re-indenting the return line.",
    ],
    "ts": [
        "The user wants `formatDate` in `src/date.ts` to zero-pad months and days.",
        "`src/date.ts`: month and day now go through `padStart(2, '0')`.",
        '`npx jest src/date.test.ts` failed once ("2024-3-7" instead of "2024-03-07"), '
        "then passed 15 of 15.",
        "Done: all 15 tests pass.",
        "The pads single-digit months test failed before the fix; resolved by padStart.",
    ],
    "de": [
        "Die Funktion `berechne_summe` in `rechner.py` soll `summe` heißen, mit allen Aufrufen.",
        "`rechner.py` und `main.py` wurden per sed geändert.",
        "`grep -rn berechne_summe .` fand zwei Stellen; `python -m pytest -q`: 4 passed.",
        "Erledigt, keine offenen Schritte.",
        "Keine Fehler.",
    ],
}


def _good(session: str) -> list[Answer]:
    b = GOOD[session]
    digest = (b[0], b[3])
    styles = {
        "emoji-headings": "\n".join(
            f"## {e} {t}\n{line}" for e, t, line in zip("🎯📁🔧📌⚠", TITLES, b, strict=True)
        ),
        "caps-colon": "\n".join(
            f"{t.upper()}:\n  {line}" for t, line in zip(TITLES, b, strict=True)
        ),
        "h3-numbered": "\n\n".join(
            f"### {n}) {t}\n{line}" for n, (t, line) in enumerate(zip(TITLES, b, strict=True), 1)
        ),
        "preamble-and-bullets": "Here is the summary.\n\n"
        + "\n".join(f"**{t}:**\n* {line}" for t, line in zip(TITLES, b, strict=True)),
        "spanish-body": under_headings(
            [
                f"Objetivo: {b[0]}",
                f"Archivos: {b[1]}",
                f"Comandos: {b[2]}",
                "Terminado; no queda nada pendiente.",
                f"Errores: {b[4]}",
            ]
        ),
    }
    # The archive template's sections hold the facts by what they are (the files under File
    # System State), as the development set's good answers do: by position, the errors
    # line stood under File System State.
    arch = archived({title: [line] for title, line in zip(TITLES, b, strict=True)})
    return [
        _ans(session, f"good-{kind}", True, text, arch, digest) for kind, text in styles.items()
    ]


def _same(text: str) -> tuple[str, str, tuple[str, str]]:
    return text, text, (text, text)


def _five(lines: list[str]) -> tuple[str, str, tuple[str, str]]:
    return under_headings(lines), under_archived(lines), (lines[0], lines[3])


BAD: dict[str, tuple[str, str, tuple[str, str]]] = {
    "json-empty": _same(
        '{"goals": "", "file_operations": [], "tool_calls": [], "task_status": "", "errors": []}'
    ),
    "empty-table": _same(
        "| Section | Content |\n|---|---|\n" + "".join(f"| {t} | |\n" for t in TITLES)
    ),
    "chain-of-thought": _same(
        "Let me think about what happened here. First I should look at the user's request, "
        "then at what the agent did, and finally decide what to put in each section. I will "
        "be careful to keep the paths exact."
    ),
    "diff-only": _same(
        "```diff\n--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-import os\n+import sys\n```"
    ),
    "apology-partial": _five(
        [
            "Sorry, I could only summarize part of this.",
            "Partial.",
            "Partial.",
            "Incomplete.",
            "Unknown.",
        ]
    ),
    "same-line-everywhere": _five(["The conversation is about programming."] * 5),
    "emoji-only": _five(["✅", "📁", "🔧", "⏳", "❌"]),
    "french-descriptions": _five(
        [
            "Cette section décrit les objectifs de l'utilisateur et les décisions prises.",
            "Ici figureraient les fichiers lus, créés, modifiés ou supprimés.",
            "Les appels d'outils importants et leurs résultats clés.",
            "Ce qui est fait, en cours et ce qui reste à faire.",
            "Les erreurs rencontrées et leur résolution.",
        ]
    ),
    "german-questions": _five(
        [
            "Welche Ziele meinst du genau?",
            "Soll ich alle Dateien aufführen?",
            "Welche Befehle sind wichtig?",
            "Wie ist der aktuelle Stand aus deiner Sicht?",
            "Gab es Fehler, die ich erwähnen soll?",
        ]
    ),
    "french-tbd": _five(["À compléter."] * 2 + ["À définir."] * 2 + ["À compléter."]),
    "hallucinated-deploy": _five(
        [
            "Ship the release: tag v2.4.1 and push the container.",
            "Edited `deploy/helm/values-prod.yaml` and `.github/workflows/release.yml`.",
            "`helm upgrade --install api ./deploy/helm` and `gh release create v2.4.1` ran.",
            "The rollout to prod-eu-west-1 is at 40%; next, watch the error budget.",
            "`Error: UPGRADE FAILED: timed out waiting for the condition`, retried.",
        ]
    ),
    "human-ai-lines": _same(
        "Human: please fix the bug\nAI: I will look at the file first\nHuman: ok\nAI: fixed"
    ),
    "nothing-done": _five(
        [
            "The user has not asked for anything yet.",
            "None.",
            "None.",
            "Nothing has been done yet.",
            "None.",
        ]
    ),
    "unfinished-list": _five(
        [
            "Fix the reported problem in the code and then",
            "Several files, including",
            "Some commands such as",
            "In progress: the agent was about to",
            "An error occurred when",
        ]
    ),
}


def _bad(session: str) -> list[Answer]:
    return [_ans(session, kind, False, t, a, d) for kind, (t, a, d) in BAD.items()]


def heldout_set() -> list[Answer]:
    return [a for s in sessions() for a in (*_good(s.name), *_bad(s.name))]
