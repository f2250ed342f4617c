"""Every switch, through the switch drivers' facts (never raw text): reachable, OS version,
every cabled port admin up, oper up, MTU, speed, its LLDP neighbour; PFC off globally and per
port, no lossless priority, RoCE off; running config saved."""

from __future__ import annotations

import pytest

FIX = None
# Switch checks read the switch drivers' facts, no host command.
COMMANDS: dict[str, str] = {}


def _fix(ctx, switch: str) -> str:
    return f"racfg deploy {ctx.inventory_display} --limit {switch} --tags switch"


def test_reachable(switch, facts, verdict):
    verdict.expect("reachable over SSH", "reachable over SSH", message=f"{facts.platform} {facts.version}")


def test_os_version(switch, facts, verdict):
    pin = switch.vars["racfg_switch"].get("os_version")
    if not pin:
        verdict.info(f"{facts.version} (no pin: switches[].os_version)")
        return
    verdict.expect(pin, facts.version, ok=facts.version.startswith(str(pin)),
                   fix=f"upgrade {switch.target} to {pin}")


def test_pfc_off(switch, facts, verdict, ctx):
    verdict.expect("PFC off", "PFC on" if facts.pfc.enabled else "PFC off", fix=_fix(ctx, switch.target))


def test_no_lossless_priority(switch, facts, verdict, ctx):
    prios = list(facts.pfc.lossless_priorities)
    verdict.expect("none", ", ".join(map(str, prios)) or "none", fix=_fix(ctx, switch.target))


def test_roce_off(switch, facts, verdict, ctx):
    verdict.expect("RoCE off", "RoCE on" if facts.pfc.roce else "RoCE off", fix=_fix(ctx, switch.target))


def test_config_saved(switch, facts, verdict, ctx):
    saved = getattr(facts, "config_saved", None)
    if saved is None:
        pytest.skip(f"{facts.platform}: the driver cannot tell saved from running config on this switch")
    verdict.expect("running config saved", "saved" if saved else "unsaved changes", ok=saved,
                   fix=f"save the configuration on {switch.target} (racfg deploy {ctx.inventory_display} "
                       f"--limit {switch.target} --tags switch saves after applying)")


def _port(facts, port):
    have = facts.interfaces.get(port.label)
    if have is None:
        raise LookupError(f"{port.target} reports no port {port.label}")
    return have


def test_port_admin_up(port, facts, verdict, ctx):
    verdict.expect("up", "up" if _port(facts, port).admin_up else "shutdown", fix=_fix(ctx, port.target))


def test_port_oper_up(port, facts, verdict, ctx):
    have = _port(facts, port)
    verdict.expect("up", "up" if have.oper_up else "down",
                   fix=f"check the cable {port.target} {port.label} <-> {port.port['description']}"
                   if have.admin_up else _fix(ctx, port.target))


def test_port_mtu(port, facts, verdict, ctx):
    verdict.expect(int(port.port["mtu"]), _port(facts, port).mtu, fix=_fix(ctx, port.target))


def test_port_speed(port, facts, verdict, ctx):
    have = _port(facts, port).speed_gbps
    want = float(port.port["speed_gbps"])
    if have is None:
        pytest.skip(f"{port.target} reports no speed for {port.label}")
    verdict.expect(f"{want:g}G", f"{have:g}G", ok=abs(have - want) < 0.5, fix=_fix(ctx, port.target))


def test_port_pfc_off(port, facts, verdict, ctx):
    on = facts.pfc.ports.get(port.label, False)
    verdict.expect("PFC off", "PFC on" if on else "PFC off", fix=_fix(ctx, port.target))


def test_port_lldp_neighbour(port, facts, verdict, ctx):
    platform = switch_platform(ctx, port.target)
    if platform == "mlnxos-ib":
        pytest.skip("InfiniBand has no LLDP: cabling is checked from the subnet manager's view (ibnetdiscover)")
    verdicts = ctx.cabling()
    v = verdicts[(port.target, port.label)]
    want = port.port["description"]
    have = f"{v.switch_sees[0]}:{v.switch_sees[1]}" if v.switch_sees else "(no neighbour heard)"
    if v.swapped_with:
        verdict.expect(want, have, ok=False, message=v.problems[0],
                       fix=f"swap the cables at {port.target} ports {port.label} and {v.swapped_with.port}")
    verdict.expect(want, have, fix=f"re-cable {port.target} {port.label} to {want}, or correct the inventory")


def switch_platform(ctx, name: str) -> str:
    return str(ctx.site.switches[name]["racfg_switch"]["platform"])
