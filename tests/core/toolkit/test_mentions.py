from app.core.toolkit.mentions import append_reminders, find_mentions, render_reminders

SEED_REMINDER = (
    "<system-reminder>\n"
    "The user mentioned @src/utils/auth.ts.\n"
    "You MUST read this file with the Read tool before answering.\n"
    "</system-reminder>"
)


def _reminder(path: str) -> str:
    return (
        "<system-reminder>\n"
        f"The user mentioned @{path}.\n"
        "You MUST read this file with the Read tool before answering.\n"
        "</system-reminder>"
    )


def test_one_mention_gets_seed_004_reminder_exactly() -> None:
    text = "Why does @src/utils/auth.ts fail?"
    assert find_mentions(text) == ["src/utils/auth.ts"]
    assert append_reminders(text, ["src/utils/auth.ts"]) == f"{text}\n\n{SEED_REMINDER}"


def test_an_email_address_is_not_a_mention() -> None:
    assert find_mentions("mail user@example.com or admin@host.io about @README.md") == ["README.md"]


def test_an_at_after_a_digit_is_not_a_mention_but_after_punctuation_it_is() -> None:
    assert find_mentions('v2@x.py (@a.py) [@b/c.md] "@d.txt" x@@e.py') == [
        "a.py",
        "b/c.md",
        "d.txt",
        "e.py",
    ]


def test_mentions_keep_first_appearance_order_and_each_path_once() -> None:
    text = "@b.py then @a.py, again @b.py and @a.py"
    assert find_mentions(text) == ["b.py", "a.py"]


def test_a_trailing_dot_ends_the_sentence_not_the_path() -> None:
    assert find_mentions("Read @README.md. Then @docs/.") == ["README.md", "docs/"]


def test_paths_stop_at_spaces_and_non_ascii() -> None:
    assert find_mentions("@my file.py @文件.py @src/ä.py") == ["my", "src/"]


def test_input_without_mentions_is_returned_unchanged() -> None:
    assert find_mentions("no mentions here, user@example.com") == []
    assert append_reminders("no mentions here", []) == "no mentions here"


def test_at_most_five_are_named_then_and_n_more() -> None:
    paths = [f"f{i}.py" for i in range(7)]
    rendered = render_reminders(paths)
    more = "<system-reminder>\n(and 2 more…)\n</system-reminder>"
    expected = "\n".join([*(_reminder(f"f{i}.py") for i in range(5)), more])
    assert rendered == expected


def test_exactly_five_mentions_have_no_more_line() -> None:
    paths = [f"f{i}.py" for i in range(5)]
    assert render_reminders(paths) == "\n".join(_reminder(p) for p in paths)


def test_the_limit_is_configurable() -> None:
    assert render_reminders(["a.py", "b.py"], limit=1) == (
        _reminder("a.py") + "\n<system-reminder>\n(and 1 more…)\n</system-reminder>"
    )


def test_an_input_of_only_a_mention_still_reads_as_input_then_reminder() -> None:
    assert append_reminders("@a.py", ["a.py"]) == f"@a.py\n\n{_reminder('a.py')}"
