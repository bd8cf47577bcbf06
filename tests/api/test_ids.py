import pytest

from app.api.errors import ApiError
from app.api.ids import require_id


def test_a_valid_id_passes() -> None:
    require_id("00000000000000000001-abcdef", "archive_id")


def test_a_path_as_id_is_a_422_naming_the_parameter_and_its_kind() -> None:
    with pytest.raises(ApiError) as raised:
        require_id("../etc", "session_id")
    error = raised.value
    assert (error.status, error.code, error.message, error.field) == (
        422,
        "invalid_request",
        "not a valid session id",
        "session_id",
    )
