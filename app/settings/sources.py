"""What the settings are read with, apart from their declarations: the prefix, comma-separated
lists, and the test for a local server."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import BeforeValidator
from pydantic_settings import NoDecode

ENV_PREFIX = "COMPACT_"


def split_commas(value: object) -> object:
    """A list given as text (`a, b`): its comma-separated parts, blanks dropped."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


# A list setting is comma-separated text, not JSON.
CommaList = Annotated[list[str], NoDecode, BeforeValidator(split_commas)]


def is_loopback(host: str) -> bool:
    """Whether a server's host is this machine (a local model, likely on a CPU)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
