"""Every package a role installs is installed (dpkg)."""

from __future__ import annotations

# The section these checks read: every package dpkg knows, with its state and version.
COMMANDS = {"dpkg": "dpkg-query -W -f='${db:Status-Abbrev}\\t${Package}\\t${Version}\\n'"}


def _installed(probe) -> dict[str, str]:
    out = {}
    for line in probe.section("dpkg", allow_fail=True).out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].startswith("ii"):
            out[parts[1].split(":")[0]] = parts[2]
    return out


def test_installed(package, probe, verdict, ctx):
    version = _installed(probe).get(package.label)
    fix = f"racfg deploy {ctx.inventory_display} --limit {package.target} --tags {package.value}"
    verdict.expect(f"{package.label} installed (role {package.value})",
                   f"{package.label} {version} installed" if version else "not installed", ok=version is not None,
                   fix=fix)
