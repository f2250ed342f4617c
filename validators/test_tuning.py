"""What the common role sets: every kernel parameter live and persisted, the CPU governor."""

from __future__ import annotations

import shlex

import pytest

from racfg.validate.expectations import normalise_sysctl, sysctl_file

FIX_TAGS = "common"


def COMMANDS(hv, gv, sysctl_keys):
    """The sysctl file deploy writes, each expected key's live value and writability, the governors."""
    commands = {
        "sysctl_file": "cat /etc/sysctl.d/90-racfg.conf",
        "governor": "cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor 2>/dev/null | sort | uniq -c",
    }
    if sysctl_keys:
        loop = " ".join(shlex.quote(k) for k in sysctl_keys)
        commands["sysctl_live"] = (
            f"for k in {loop}; do p=/proc/sys/$(echo \"$k\" | tr . /); "
            "if [ -w \"$p\" ]; then w=rw; else w=ro; fi; "
            "printf '%s\\t%s\\t%s\\n' \"$k\" \"$w\" \"$(cat \"$p\" 2>&1 | tr '\\t' ' ')\"; done"
        )
    return commands


def _live(probe) -> dict[str, tuple[bool, str]]:
    out = {}
    for line in probe.section("sysctl_live").out.splitlines():
        key, writable, value = [*line.split("\t"), "", ""][:3]
        out[key] = (writable == "rw", normalise_sysctl(value))
    return out


def _persisted(probe) -> dict[str, str] | None:
    """The keys racfg's sysctl file persists; None when the file is missing."""
    section = probe.section("sysctl_file", allow_fail=True)
    if not section.ok:
        return None
    out = {}
    for line in section.out.splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith(("#", ";")):
            out[key.strip()] = normalise_sysctl(value)
    return out


def test_sysctl_live(sysctl, probe, verdict):
    writable, value = _live(probe).get(sysctl.label, (False, "(missing)"))
    if value.startswith("cat: ") or value == "(missing)":
        pytest.skip(f"{sysctl.label} does not exist in this host's /proc/sys (not in this network namespace "
                    f"or kernel): it is persisted in {sysctl_file()} for the next boot")
    if value != sysctl.value and not writable:
        pytest.skip(f"{sysctl.label} is read-only here (/proc/sys not writable for it, as in a container): "
                    f"live value {value} cannot be set; it is persisted in {sysctl_file()}")
    persisted = (_persisted(probe) or {}).get(sysctl.label)
    cause = (f"persisted as {persisted} in {sysctl_file()} but {value} live: changed at runtime since it was "
             "applied" if persisted == sysctl.value and value != sysctl.value else None)
    verdict.expect(sysctl.value, value, message=cause)


def test_sysctl_persisted(sysctl, probe, verdict):
    persisted = _persisted(probe)
    if persisted is None:
        verdict.expect(sysctl.value, f"({sysctl_file()} missing)", ok=False,
                       message="nothing racfg sets in the kernel would survive the next boot")
    value = persisted.get(sysctl.label, f"(not in {sysctl_file()})")
    live = _live(probe).get(sysctl.label, (False, ""))[1] if probe.get("sysctl_live") is not None else ""
    cause = (f"set live ({live}) but not persisted: lost at the next boot" if live == sysctl.value
             and value != sysctl.value else None)
    verdict.expect(sysctl.value, value, message=cause)


def test_cpu_governor(node, probe, verdict, ctx):
    want = (ctx.site.group_vars.get("racfg_tuning") or {}).get("cpu_governor", "performance")
    if want == "none":
        pytest.skip("software.tuning.cpu_governor is none: the governor is left alone")
    counts = probe.section("governor").out.split()
    governors = set(counts[1::2])
    if not governors:
        pytest.skip("no cpufreq on this host (no CPU frequency scaling to set)")
    verdict.expect(want, ", ".join(sorted(governors)), ok=governors == {want})
