from app.core.restore.freshness import modified_note, seen_key, with_note


def test_a_changed_mtime_gets_seed_004_note() -> None:
    assert modified_note("src/a.py", 1, 2) == "Note: src/a.py was modified externally."


def test_first_read_and_unchanged_file_get_no_note() -> None:
    assert modified_note("a.py", None, 5) is None
    assert modified_note("a.py", 5, 5) is None


def test_keys_are_sha256_hex_of_the_location() -> None:
    assert (
        seen_key("src/a.py") == "4cb4854bf9d4ea6bf9cb31f4eda6b48b73b87992490f60aace407970d380db90"
    )
    assert seen_key("../../etc/passwd").isalnum()


def test_the_note_sits_on_its_own_line_after_one_blank_line() -> None:
    note = "Note: a was modified externally."
    assert with_note("x = 1\n", note) == f"x = 1\n\n{note}"
    assert with_note("x = 1", note) == f"x = 1\n\n{note}"
    assert with_note("", note) == note
    assert with_note("x", None) == "x"
