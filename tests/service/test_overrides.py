from app.service.overrides import pick


def test_a_missing_option_falls_back_to_the_default() -> None:
    assert pick(None, 7) == 7


def test_zero_and_false_sent_by_the_request_are_honoured() -> None:
    assert (pick(0, 7), pick(False, True), pick(0.5, 0.8)) == (0, False, 0.5)
