"""ofed_info -s and the comparison with an inventory pin."""

from __future__ import annotations

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.ofed import parse_ofed_info_s, version_matches

FIXTURE = "ofed_info-s_MLNX_OFED_LINUX-5.5-1.0.3.2_openucx-ucx-issue-8772.txt"


def test_ofed_info_s(read):
    version = parse_ofed_info_s(read(FIXTURE))
    assert (version.full, version.flavour, version.version) == ("MLNX_OFED_LINUX-5.5-1.0.3.2", "MLNX_OFED_LINUX",
                                                                "5.5-1.0.3.2")
    assert version.matches("5.5-1.0.3") and not version.matches("4.5-1.0.1.0")


def test_ofed_info_s_after_a_warning_with_crlf(read):
    text = "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)\r\n" + read(FIXTURE).replace("\n",
                                                                                                              "\r\n")
    assert parse_ofed_info_s(text).version == "5.5-1.0.3.2"


@pytest.mark.parametrize(
    ("installed", "pin", "matches"),
    [
        ("4.5-1.0.1.0", "4.5-1.0.1.0", True),
        ("4.5-1.0.1.0", "4.5-1.0.1", True),  # the pin omits the last component
        ("4.5-1.0.1.0", "4.5-1.0.1.1", False),
        ("4.5-1.0.10.0", "4.5-1.0.1", False),  # numbers, not text prefixes
        ("5.5-1.0.3.2", "4.5-1.0.1.0", False),
        ("MLNX_OFED_LINUX-4.7-3.2.9.0", "4.7-3.2.9.0", True),
    ],
)
def test_version_against_pin(installed, pin, matches):
    assert version_matches(installed, pin) is matches


def test_bad_pin_is_a_parse_error():
    with pytest.raises(ParseError, match="not an OFED version"):
        version_matches("5.5-1.0.3.2", "latest")
