"""Environment drift: the facts of the hosts and switches now against the accepted baseline.

Pure functions over two fact documents (what ``playbooks/facts.yml`` and the switch drivers
record), so every kind of change reads as one sentence a person understands at once:
``dgx03: package ibverbs-utils 44.0-2 -> (removed)``. Unit-tested on recorded baselines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """One difference. ``sign`` is terraform's: ``+`` added, ``-`` removed, ``~`` changed."""

    target: str
    sign: str
    subject: str  # "package ibverbs-utils", "kernel", "NIC data0 MTU", "drive /dev/nvme1n1"
    before: str | None
    after: str | None
    key: str  # stable id part: "packages/ibverbs-utils"
    note: str = ""  # "upgraded", "downgraded", "serial changed" ...
    # the fix where it is not deploying the target itself (a fabric change: the cause's switch,
    # racfg.drift.fabric_environment)
    repair: str = ""

    def sentence(self) -> str:
        before = "(none)" if self.before is None else self.before
        after = "(removed)" if self.after is None else self.after
        note = f" ({self.note})" if self.note and f"({self.note})" != after else ""  # not "(removed) (removed)"
        return f"{self.target}: {self.subject} {before} -> {after}{note}"

    def by_hand(self) -> str | None:
        """The repair when `racfg deploy` would not make one: the roles install what is missing but leave an
        installed package at whatever version it has, so an up- or downgrade is put back by hand."""
        if self.key.startswith("packages/") and self.sign == "~":
            return f"on {self.target}: apt-get install {self.key.split('/', 1)[1]}={self.before}"
        return None


# --- Debian version ordering (dpkg --compare-versions), to say upgraded or downgraded --------------

def _order(char: str) -> int:
    if char == "~":
        return -1
    if char.isdigit() or not char:
        return 0
    return ord(char) if char.isalpha() else ord(char) + 256


def _compare_part(a: str, b: str) -> int:
    while a or b:
        a_text = re.match(r"\D*", a).group()  # type: ignore[union-attr]
        b_text = re.match(r"\D*", b).group()  # type: ignore[union-attr]
        for i in range(max(len(a_text), len(b_text))):
            ca = _order(a_text[i] if i < len(a_text) else "")
            cb = _order(b_text[i] if i < len(b_text) else "")
            if ca != cb:
                return -1 if ca < cb else 1
        a, b = a[len(a_text):], b[len(b_text):]
        a_num = re.match(r"\d*", a).group()  # type: ignore[union-attr]
        b_num = re.match(r"\d*", b).group()  # type: ignore[union-attr]
        if int(a_num or 0) != int(b_num or 0):
            return -1 if int(a_num or 0) < int(b_num or 0) else 1
        a, b = a[len(a_num):], b[len(b_num):]
    return 0


def compare_debian_versions(a: str, b: str) -> int:
    """-1, 0, 1 as Debian version ``a`` is older than, equal to, or newer than ``b``."""
    def split(v: str) -> tuple[int, str, str]:
        epoch, _, rest = v.rpartition(":") if ":" in v else ("0", "", v)
        upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "0")
        return int(epoch or 0), upstream, revision

    ea, ua, ra = split(a)
    eb, ub, rb = split(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _compare_part(ua, ub) or _compare_part(ra, rb)


# --- hosts -------------------------------------------------------------------------------------

def _scalar(target: str, subject: str, key: str, before: Any, after: Any) -> list[Change]:
    if before == after or (before is None and after is None):
        return []
    sign = "+" if before is None else "-" if after is None else "~"
    return [Change(target, sign, subject, _s(before), _s(after), key)]


def _s(value: Any) -> str | None:
    return None if value is None else str(value)


def package_changes(target: str, before: dict[str, str], after: dict[str, str]) -> list[Change]:
    out = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is None:
            out.append(Change(target, "+", f"package {name}", None, new, f"packages/{name}", "installed"))
        elif new is None:
            out.append(Change(target, "-", f"package {name}", old, None, f"packages/{name}", "removed"))
        else:
            way = "upgraded" if compare_debian_versions(new, old) > 0 else "downgraded"
            out.append(Change(target, "~", f"package {name}", old, new, f"packages/{name}", way))
    return out


def _drives(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for d in facts.get("drives") or []:
        path = d.get("path") or f"/dev/{d.get('name')}"
        out[path] = d
    return out


def drive_changes(target: str, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    out = []
    old, new = _drives(before), _drives(after)
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a is None and b is not None:
            out.append(Change(target, "+", f"drive {path}", None, _drive_text(b), f"drives/{path}", "new"))
        elif b is None and a is not None:
            out.append(Change(target, "-", f"drive {path}", _drive_text(a), None, f"drives/{path}", "missing"))
        elif a is not None and b is not None:
            for field in ("serial", "model", "size"):
                if a.get(field) != b.get(field):
                    out.append(Change(target, "~", f"drive {path} {field}", _s(a.get(field)), _s(b.get(field)),
                                      f"drives/{path}/{field}",
                                      "replaced?" if field == "serial" else ""))
    return out


def _drive_text(d: dict[str, Any]) -> str:
    return " ".join(str(x) for x in (d.get("model"), d.get("serial"), d.get("size")) if x) or "present"


def nic_changes(target: str, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """NIC MTU, addresses, driver and firmware, and the data plane on it (admin state, routes, static
    neighbour entries: racfg_probe's nic_facts) (``nics``: name -> MTU, or name -> {mtu, addresses ...}).
    A field only one side has (a baseline recorded before it was read) is not compared."""
    out = []
    old, new = before.get("nics") or {}, after.get("nics") or {}
    for name in sorted(set(old) | set(new)):
        a, b = _nic(old.get(name)), _nic(new.get(name))
        if not a and b:
            out.append(Change(target, "+", f"NIC {name}", None, "present", f"nics/{name}"))
            continue
        if a and not b:
            out.append(Change(target, "-", f"NIC {name}", "present", None, f"nics/{name}"))
            continue
        for field, label in (("mtu", "MTU"), ("addresses", "addresses"), ("driver", "driver"),
                             ("firmware", "firmware"), ("admin", "admin state"), ("routes", "routes"),
                             ("neighbours", "static neighbour entries")):
            if field in a and field in b and a[field] != b[field]:
                out.append(Change(target, "~", f"NIC {name} {label}", _s(a[field]), _s(b[field]),
                                  f"nics/{name}/{field}"))
    return out


def _nic(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return {k: ((", ".join(v) or "(none)") if isinstance(v, list) else v) for k, v in value.items()}
    return {"mtu": value}


def host_changes(target: str, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every environment difference of one host, in a stable order."""
    out: list[Change] = []
    out += _scalar(target, "kernel", "kernel", before.get("kernel"), after.get("kernel"))
    out += _scalar(target, "OS", "os", before.get("os"), after.get("os"))
    out += _scalar(target, "OFED (ofed_info -s)", "ofed", before.get("ofed"), after.get("ofed"))
    gpu_before, gpu_after = before.get("gpu") or {}, after.get("gpu") or {}
    out += _scalar(target, "GPU driver", "gpu/driver", gpu_before.get("driver"), gpu_after.get("driver"))
    out += _scalar(target, "GPU VBIOS", "gpu/vbios", gpu_before.get("vbios"), gpu_after.get("vbios"))
    out += package_changes(target, before.get("packages") or {}, after.get("packages") or {})
    out += nic_changes(target, before, after)
    out += drive_changes(target, before, after)
    return out


def switch_changes(target: str, before: dict[str, Any], after: dict[str, Any],
                   isl_ports: set[str] | frozenset[str] = frozenset()) -> list[Change]:
    """Switch OS version, per-port MTU/admin/speed/description, PFC and RoCE state. ``isl_ports``
    are left to racfg.drift.fabric_environment, which names each as the ISL it is (and its oper state)."""
    out = _scalar(target, "OS version", "version", before.get("version"), after.get("version"))
    old, new = before.get("interfaces") or {}, after.get("interfaces") or {}
    for port in sorted((set(old) | set(new)) - set(isl_ports)):
        a, b = old.get(port) or {}, new.get(port) or {}
        for field, label in (("mtu", "MTU"), ("admin_up", "admin up"), ("speed_gbps", "speed"),
                             ("description", "description")):
            if a.get(field) != b.get(field):
                out.append(Change(target, "~", f"port {port} {label}", _s(a.get(field)), _s(b.get(field)),
                                  f"ports/{port}/{field}"))
    pfc_a, pfc_b = before.get("pfc") or {}, after.get("pfc") or {}
    for field, label in (("enabled", "PFC"), ("roce", "RoCE"), ("lossless_priorities", "lossless priorities")):
        if pfc_a.get(field) != pfc_b.get(field):
            out.append(Change(target, "~", label, _s(pfc_a.get(field)), _s(pfc_b.get(field)), f"pfc/{field}"))
    ports_a, ports_b = pfc_a.get("ports") or {}, pfc_b.get("ports") or {}
    for port in sorted(set(ports_a) | set(ports_b)):
        if bool(ports_a.get(port)) != bool(ports_b.get(port)):
            out.append(Change(target, "~", f"port {port} PFC", _s(bool(ports_a.get(port))),
                              _s(bool(ports_b.get(port))), f"pfc/ports/{port}"))
    return out
