"""The summary gate against answer sets: bad answers accepted, good answers rejected, by kind
and by path.

Usage:
  python -m bench.gate [--set dev|heldout|claims|languages|all] [--paths compact,job,tail,digest]
                       [--show] [--write]

Every answer of the set (`tests/gate_answers.py`, `tests/gate_heldout.py`: good and bad
answers by kind on several sessions; `tests/gate_claims.py`: faithful summaries with one
sentence made false, by kind, and the good answers they were made from;
`tests/gate_languages.py`: the same in German, French and Spanish, and `tests/gate_edits.py`:
an edit told the wrong way round, both part of `claims`) is served by the fake
OpenAI-compatible server (`tests/fakes/fake_llm_server.py`) to the real app, in-process,
with no fallback, on each path: `/compact` (`full`, the transcript prompt), a
background job (`/compactions`), the `tail` strategy (its archive template, the session
followed by one short round it keeps) and the digest path (two questions). An answer is
accepted when the compaction used the LLM's text (an answer with one false sentence: when
that sentence is still in it — dropped, with the rest used, is the right verdict); a
compaction refused as `no_gain` (a history no larger than its summary) is no verdict of
the gate and is left out. `--show` prints each wrong verdict. The table
goes to its own section of `bench/RESULTS.md` with `--write`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from app.main import create_app
from app.settings import Settings
from bench.results import RESULTS, write_section
from tests.fakes.fake_llm_server import FakeLlm, openai_completion, reply, start_fake_llm
from tests.gate_answers import Answer, dev_set
from tests.gate_sessions import BY_NAME

HEADING = "## The summary gate: answer sets through every path (bench.gate)"
PATHS = ("compact", "job", "tail", "digest")
TAIL_ROUND = (
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Thanks, carry on."},
    {"role": "assistant", "content": "Carrying on."},
)


@dataclass(frozen=True)
class Verdict:
    answer: Answer
    path: str
    accepted: bool  # used with everything it says (a bad answer: its false sentence kept)
    detail: str  # the rejection's reason, or the warnings of an accepted answer
    trimmed: bool = False  # used without its false sentence: right for a bad answer


def answers(which: str) -> list[Answer]:
    found: list[Answer] = []
    if which in ("dev", "all"):
        found += dev_set()
    if which in ("heldout", "all"):
        from tests.gate_heldout import heldout_set, sessions

        BY_NAME.update({s.name: s for s in sessions()})
        found += heldout_set()
    if which in ("claims", "all"):
        from tests.gate_claims import claims_set

        found += claims_set()
    if which in ("claims", "languages", "all"):
        from tests.gate_claims import sessions as claim_sessions
        from tests.gate_edits import edits_set
        from tests.gate_edits import sessions as edit_sessions
        from tests.gate_languages import languages_set
        from tests.gate_languages import sessions as language_sessions

        everyone = [*claim_sessions(), *language_sessions(), *edit_sessions()]
        BY_NAME.update({s.name: s for s in everyone})
        found += languages_set() + edits_set()
    return found


def _settings(path: str, url: str, tmp: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        workdir=tmp,
        data_dir=f"{tmp}/data-{path}",
        summarizer="openai",
        openai_base_url=url + "/v1",
        summary_model="m",
        summary_mode="digest" if path == "digest" else "transcript",
        summary_fallback="none",
        summary_attempts=1,
    )


def _body(answer: Answer, path: str) -> dict[str, Any]:
    session = BY_NAME[answer.session]
    body: dict[str, Any] = {"messages": session.raw, "force": True}
    if path == "tail":
        # one more round, kept verbatim: the whole session is what the archive summarizes
        ends_with_user = session.raw[-1]["role"] == "user"
        body["messages"] = [*session.raw, *TAIL_ROUND[0 if ends_with_user else 1 :]]
        body["options"] = {"strategy": "tail", "tail_keep_recent_rounds": 1, "fallback": False}
    return body


def _script(answer: Answer, path: str) -> list[Any]:
    texts = {"tail": [answer.archived], "digest": list(answer.digest)}.get(path, [answer.sections])
    return [reply(200, openai_completion(t, finish_reason=answer.finish)) for t in texts]


async def _run(client: httpx.AsyncClient, answer: Answer, path: str) -> dict[str, Any]:
    body = _body(answer, path)
    if path != "job":
        response = await client.post("/compact", json=body)
        data: dict[str, Any] = response.json()
        if response.status_code != 200:
            raise RuntimeError(f"{response.status_code}: {response.text[:300]}")
        return data
    job_id = (await client.post("/compactions", json=body)).json()["id"]
    for _ in range(2000):
        job = (await client.get(f"/compactions/{job_id}")).json()
        if job["state"] in ("done", "failed"):
            result: dict[str, Any] = job.get("result") or {"compacted": False, "warnings": []}
            return result
        await asyncio.sleep(0.005)
    raise RuntimeError(f"job {job_id} never finished")


def _holds(data: dict[str, Any], sentence: str) -> bool:
    """Whether the compacted messages still say `sentence` (the gate keeps or drops a
    sentence whole)."""
    needle = " ".join(sentence.split())
    texts: list[str] = []
    for message in data.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return any(needle in " ".join(t.split()) for t in texts)


def _detail(data: dict[str, Any]) -> str:
    warnings = data.get("warnings") or []
    if data.get("compacted"):
        return "; ".join(w for w in warnings if w.startswith("summary:"))
    for warning in warnings:
        if "[" in warning and "]" in warning:
            return warning.split("[", 1)[1].split("]", 1)[0]
    return str(data.get("reason"))


async def measure(found: Sequence[Answer], paths: Sequence[str]) -> list[Verdict]:
    verdicts: list[Verdict] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        start_fake_llm([reply(200, openai_completion("-"))], record=False) as fake,
    ):
        for path in paths:
            verdicts += await _measure_path(fake, found, path, tmp)
    return verdicts


async def _measure_path(
    fake: FakeLlm, found: Sequence[Answer], path: str, tmp: str
) -> list[Verdict]:
    out: list[Verdict] = []
    app = create_app(_settings(path, fake.url, tmp))
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gate.test") as client:
            for answer in found:
                if path == "digest" and not answer.digest:
                    continue  # a kind the digest path cannot show (it quotes the requests)
                fake.rescript(_script(answer, path))
                data = await _run(client, answer, path)
                if data.get("reason") == "no_gain":
                    continue  # not the gate's verdict: a summary the history is not larger than
                used = bool(data.get("compacted")) and data.get("summarizer") == "openai"
                kept = not answer.false or _holds(data, answer.false)
                out.append(Verdict(answer, path, used and kept, _detail(data), used and not kept))
    return out


def render(verdicts: Sequence[Verdict], which: str, command: str) -> str:
    lines = [HEADING, "", f"Set: {which}. Command: `{command}`.", ""]
    lines += ["| path | bad accepted | good rejected |", "|---|---|---|"]
    for path in dict.fromkeys(v.path for v in verdicts):
        mine = [v for v in verdicts if v.path == path]
        bad = [v for v in mine if not v.answer.good]
        good = [v for v in mine if v.answer.good]
        lines.append(
            f"| {path} | {_share(sum(v.accepted for v in bad), len(bad))} "
            f"| {_share(sum(not v.accepted for v in good), len(good))} |"
        )
    lines += ["", "By kind (all paths): wrong verdicts / answers, and the reasons given.", ""]
    lines += ["| kind | good? | wrong | reasons |", "|---|---|---|---|"]
    by_kind: dict[tuple[str, bool], list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_kind[(_kind(v.answer.kind), v.answer.good)].append(v)
    for (kind, good), mine in sorted(by_kind.items()):
        wrong = sum(v.accepted != good for v in mine)
        reasons = Counter(_said(v) for v in mine)
        said = ", ".join(f"{r} {n}" for r, n in reasons.most_common(4))
        lines.append(f"| {kind} | {'good' if good else 'bad'} | {wrong}/{len(mine)} | {said} |")
    return "\n".join([*lines, ""])


def _said(v: Verdict) -> str:
    """The reason of a rejection, the rule that trimmed a false sentence, or `accepted`."""
    if v.trimmed:
        rules = [w.split("[", 1)[1].split("]", 1)[0] for w in v.detail.split("; ") if "[" in w]
        return f"dropped {rules[-1] if rules else '?'}"
    if v.accepted:
        return "accepted"
    return v.detail.split(":")[0] or "accepted"


def _kind(kind: str) -> str:
    return kind


def _share(n: int, total: int) -> str:
    return f"{n}/{total} ({n / total:.0%})" if total else "0/0"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.gate", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--set", default="dev", choices=("dev", "heldout", "claims", "languages", "all")
    )
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--show", action="store_true", help="print every wrong verdict")
    parser.add_argument("--write", action="store_true", help="write the table to RESULTS.md")
    args = parser.parse_args(argv)
    found = answers(args.set)
    verdicts = asyncio.run(measure(found, args.paths.split(",")))
    if args.show:
        for v in verdicts:
            if v.accepted != v.answer.good:
                state = "accepted" if v.accepted else "rejected"
                print(f"WRONG {v.path} {v.answer.name}: {state} {v.detail}", file=sys.stderr)
    command = "python -m bench.gate " + " ".join(argv if argv is not None else sys.argv[1:])
    section = render(verdicts, args.set, command)
    print(section)
    if args.write:
        write_section(HEADING, section, RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
