from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.ledger_fit import FLOOR_SHARE, fit, near_key, without_near_duplicates
from app.core.ledger_lines import Fact, render_ledger


def words(text: str) -> int:
    """A stand-in token counter: one token a word."""
    return len(text.split())


def test_commands_differing_only_in_their_numbers_are_near_duplicates() -> None:
    assert near_key("sleep 5") == near_key("sleep  10 (failed)")
    assert near_key("tail -n 50 logs/run.1.log") == near_key("tail -n 80 logs/run.22.log")
    assert near_key("kill 4127") != near_key("kill -9 4127")
    assert near_key("ls src/a") != near_key("ls src/b")


def test_only_the_latest_of_near_duplicate_commands_is_kept_where_it_stands() -> None:
    facts = [
        Fact("command", "sleep 5"),
        Fact("command", "curl localhost:8000/items/1"),
        Fact("error", "sleep 5 timed out"),
        Fact("command", "sleep 30 (failed)"),
        Fact("error", "sleep 30 timed out"),
        Fact("command", "curl localhost:8000/items/2"),
        Fact("command", "make"),
    ]
    kept, dropped = without_near_duplicates(facts)
    assert kept == [
        Fact("error", "sleep 5 timed out"),
        Fact("command", "sleep 30 (failed)"),
        Fact("error", "sleep 30 timed out"),  # errors: only exact copies are merged
        Fact("command", "curl localhost:8000/items/2"),
        Fact("command", "make"),
    ]
    assert dropped == 2


def _session(commands: int, paths: int) -> list[Fact]:
    """A long session: the goal, many changed files and requests, then the commands."""
    facts = [Fact("goal", "Migrate the app to the cloud.")]
    facts += [Fact("file_changed", f"infra/module_{i}/main.tf (edited)") for i in range(paths)]
    facts += [Fact("request", f"Now do step {i} of the plan, carefully.") for i in range(paths)]
    clouds = [f"gcloud sql instances create db-{name}" for name in ("alpha", "beta")]
    cloud = ["gcloud auth login", "gcloud projects create shop-prod", *clouds]
    facts += [Fact("command", c) for c in cloud]
    facts += [Fact("command", f"terraform plan -target=module.m{'x' * i}") for i in range(commands)]
    return facts


def test_each_kind_gets_its_floor_before_one_kind_takes_the_budget() -> None:
    facts = _session(commands=45, paths=60)
    budget = 400
    kept, tokens = fit(facts, budget, words)
    assert tokens == words(render_ledger(kept, len(facts) - len(kept), _left(facts, kept)))
    assert tokens <= budget
    commands = [f for f in kept if f.kind == "command"]
    lines = [line for line in render_ledger(kept).splitlines() if "terraform" in line]
    assert len(commands) >= 2  # before floors, the paths and requests took everything
    assert sum(words(line) for line in lines) >= int(budget * FLOOR_SHARE) - words(lines[-1])
    assert {f.kind for f in kept} == {"goal", "file_changed", "request", "command"}


def test_a_programs_commands_cost_their_arguments_so_more_of_them_fit() -> None:
    cd = "cd /home/dev/projects/shop-migration && gcloud"
    made = [f"{cd} compute instances create vm-{i} --zone=europe-west1-b" for i in range(40)]
    kept, tokens = fit([Fact("command", c) for c in made], 600, len)
    assert render_ledger(kept).splitlines()[1].startswith(f"- [commands] {cd}: compute ")
    # The same commands under as many programs (the same length) cost their whole lines.
    apart = [c.replace("gcloud", f"gclo{i:02d}") for i, c in enumerate(made)]
    kept_apart, _ = fit([Fact("command", c) for c in apart], 600, len)
    assert tokens <= 600
    assert len(kept) > len(kept_apart) + 2


def _left(facts: list[Fact], kept: list[Fact]) -> dict[str, int]:
    from collections import Counter

    return dict(Counter(f.kind for f in facts) - Counter(f.kind for f in kept))


_TEXT = st.lists(
    st.sampled_from(["gcloud", "auth", "a.py", "x" * 30, "make", "1", "·"]), min_size=1, max_size=5
).map(" ".join)
_KIND = st.sampled_from(
    ["error", "file_read", "goal", "request", "instruction", "command", "identifier"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(Fact, _KIND, _TEXT), max_size=40, unique=True), st.integers(0, 200))
def test_the_rendered_ledger_never_exceeds_its_budget(facts: list[Fact], budget: int) -> None:
    for count in (words, len):
        kept, tokens = fit(facts, budget, count)
        if kept:
            ledger = render_ledger(kept, len(facts) - len(kept), _left(facts, kept))
            assert tokens == count(ledger) <= budget
