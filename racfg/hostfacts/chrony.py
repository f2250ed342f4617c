"""Time synchronisation: ``chronyc tracking``.

The RA needs every host on the same clock (Weka refuses skew; wekachecker checks it), so validate asks
chrony whether it is synchronised and how far off it is. Formats read: ``chronyc tracking`` of chrony
3.x/4.x (an IP or a host name as reference, ``+`` signed offsets, "fast"/"slow").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from racfg.hostfacts.common import require_text, split_key_value
from racfg.hostfacts.parse_error import ParseError

# Leap status values of a synchronised clock; "Not synchronised" is the one that is not.
SYNCED_LEAP = {"Normal", "Insert second", "Delete second"}


@dataclass(frozen=True)
class ChronyTracking:
    """``chronyc tracking``. ``offset_seconds`` > 0 when the system clock is ahead ("fast") of NTP time."""

    reference_id: str
    reference_name: str | None
    stratum: int
    offset_seconds: float
    leap_status: str

    @property
    def synchronised(self) -> bool:
        return self.leap_status in SYNCED_LEAP and self.reference_id != "00000000"


_OFFSET_RE = re.compile(r"^([+-]?\d+(?:\.\d+)?) seconds (fast|slow) of NTP time$")


def parse_chronyc_tracking(text: str | bytes) -> ChronyTracking:
    """Parse ``chronyc tracking`` (``506 Cannot talk to daemon`` and other errors are a ParseError)."""
    tool = "chronyc tracking"
    fields: dict[str, str] = {}
    for line in require_text(text, tool):
        pair = split_key_value(line)
        if pair is not None:
            fields.setdefault(*pair)
    missing = [key for key in ("Reference ID", "Stratum", "System time", "Leap status") if key not in fields]
    if missing:
        raise ParseError(tool, f"no {', '.join(missing)} line (is chronyd running?)")
    reference = re.fullmatch(r"([0-9A-Fa-f]{8})(?:\s+\((.*)\))?", fields["Reference ID"])
    offset = _OFFSET_RE.match(fields["System time"])
    if reference is None or offset is None or not fields["Stratum"].isdigit():
        raise ParseError(tool, "Reference ID, Stratum or System time not in the chrony format")
    seconds = float(offset.group(1))
    return ChronyTracking(
        reference_id=reference.group(1).upper(),
        reference_name=reference.group(2) or None,
        stratum=int(fields["Stratum"]),
        offset_seconds=seconds if offset.group(2) == "fast" else -seconds,
        leap_status=fields["Leap status"],
    )


# chrony's source directives (chrony.conf(5)): the first argument is the server's address or name.
_SOURCE_DIRECTIVES = ("server", "pool", "peer")

# The configured sources as chronyd reads them: chrony.conf (Debian's path, else RHEL's), then the
# files of each ``confdir``/``sourcedir`` and ``include`` it names (the ones chronyd reads too).
CHRONY_CONF_COMMAND = (
    "f=/etc/chrony/chrony.conf; [ -f $f ] || f=/etc/chrony.conf; cat $f || exit 3; "
    "for d in $(awk '$1==\"confdir\"||$1==\"sourcedir\"{for(i=2;i<=NF;i++)print $i}' $f); do "
    "cat \"$d\"/*.conf \"$d\"/*.sources 2>/dev/null; done; "
    "for g in $(awk '$1==\"include\"{print $2}' $f); do cat $g 2>/dev/null; done; true"
)


def parse_chrony_sources(text: str) -> list[str]:
    """The time sources a chrony configuration names (``server``, ``pool``, ``peer``), in order, once
    each; comments (``#``, ``!``, ``;``, ``%``) and other directives are left out."""
    sources: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in _SOURCE_DIRECTIVES and words[1] not in sources:
            sources.append(words[1])
    return sources
