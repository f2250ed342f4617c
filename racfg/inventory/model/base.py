"""What every section of the inventory schema is built on: strict models, names, speeds, pools."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from racfg.catalog import parse_speed

NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._\-\[\]:]*[A-Za-z0-9\]])?$"


class Strict(BaseModel):
    """Base for every inventory section: unknown keys are errors, values are not coerced loosely."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


Speed = Annotated[str | int, Field(description="Link speed: 100G, 25G, EDR (=100G), HDR (=200G) ...")]


def _check_ipv4(value: str) -> str:
    ipaddress.IPv4Address(value)
    return value


def _check_speed(value: str | int | None) -> str | int | None:
    if value is not None:
        parse_speed(value)
    return value


def _check_pool(value: str | None) -> str | None:
    """An address pool: an IPv4 network written with its prefix and no host bits."""
    if value is not None:
        ipaddress.IPv4Network(value, strict=True)
    return value
