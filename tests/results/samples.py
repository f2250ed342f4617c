"""Reports the renderer tests (and a person looking at a rendered report) work from.

``awkward_report`` is small and holds every status plus the text that breaks naive renderers:
quotes, ``<``/``&``, commas, newlines, unicode, markup-like brackets, pipes, backticks and an ANSI
escape as captured from a switch CLI. ``realistic_report`` looks like a validate run of a small
RA site (4 DGX/storage hosts and a leaf switch, ~60 checks) for eyeballing the HTML.
"""

from __future__ import annotations

from pathlib import Path

from racfg.results import Report, Result, Status, expected_actual

AWKWARD_TEXT = 'He said "MTU<9000" & left, then\nwrote: naïve ✓ 日本 `x|y` *not bold* [red]no[/red] \x1b[0m'


def awkward_report() -> Report:
    """Every status, awkward text in every field a renderer shows."""
    results = [
        Result("dgx01", "dgx01/network/mtu[data0]", "network", Status.FAIL, expected_actual(9000, 1500),
               expected="9000", actual="1500", fix="racfg deploy site.yaml --limit dgx01 --tags fabric", seconds=0.25),
        Result("dgx01", "dgx01/os/sysctl[net.core.rmem_max]", "os", Status.PASS, seconds=0.01),
        Result("dgx01", "dgx01/gpu/driver", "gpu", Status.SKIP, "no GPUs in the lab, so nvidia-smi cannot run"),
        Result('sw1 "leaf", <a&b>', 'sw1/port/mtu["Eth1/1", <x>]', "switch,port", Status.FAIL, AWKWARD_TEXT,
               expected="a,b\nc", actual='"quoted" <tag> & amp',
               fix='racfg deploy "site.yaml" --limit \'sw1\' | tee <log>', seconds=1.5),
        Result("stor01", "stor01/weka/mount", "storage", Status.ERROR,
               "ssh 198.18.0.21: connection refused, so the mount could not be checked"),
        Result("stor01", "stor01/os/time-sync", "os", Status.PASS, "chrony synchronised ✓"),
        Result("cluster", "cluster/fabric/links", "fabric", Status.FAIL, expected="4 up", actual="3 up"),
    ]
    return Report(command="validate", site="awk&ward <site>", results=results, started="2024-05-01T10:00:00+0000",
                  elapsed=4.25, meta={"inventory": "inventory/ra.yaml", "limits": ["dgx01", "sw1"], "odd": "<b>&"},
                  notes=["lab run: switch passwords come from the lab <provider> & \"env\"", "second note"])


def realistic_report(attachment: Path | None = None) -> Report:
    """A validate run of 4 hosts and a leaf switch: a few failures with fixes, skips, one error."""
    results: list[Result] = []
    for host in ("dgx01", "dgx02", "stor01", "stor02"):
        dgx = host.startswith("dgx")
        for check, category in (("os/kernel", "os"), ("os/time-sync", "os"), ("os/hugepages", "os"),
                                ("os/sysctl[net.core.rmem_max]", "os"), ("os/sysctl[net.core.wmem_max]", "os"),
                                ("network/mtu[data0]", "network"), ("network/mtu[data1]", "network"),
                                ("network/address[data0]", "network"), ("network/route[default]", "network"),
                                ("ssh/reachable", "access")):
            results.append(Result(host, f"{host}/{check}", category, Status.PASS, seconds=0.02))
        if dgx:
            results.append(Result(host, f"{host}/gpu/driver", "gpu", Status.SKIP,
                                  "no GPUs in the lab: nvidia-smi cannot run"))
            results.append(Result(host, f"{host}/ib/firmware", "fabric", Status.SKIP,
                                  "no ConnectX adapters in the lab"))
        else:
            results.append(Result(host, f"{host}/weka/mount", "storage", Status.PASS, seconds=0.3))
    results = [r for r in results if r.check not in ("dgx02/network/mtu[data0]", "stor01/os/time-sync")]
    results.append(Result("dgx02", "dgx02/network/mtu[data0]", "network", Status.FAIL, expected_actual(9000, 1500),
                          expected="9000", actual="1500", fix="racfg deploy site.yaml --limit dgx02 --tags fabric"))
    results.append(Result("dgx02", "dgx02/os/sysctl[net.ipv4.tcp_timestamps]", "os", Status.FAIL,
                          expected_actual(0, 1), expected="0", actual="1",
                          fix="racfg deploy site.yaml --limit dgx02 --tags sysctl"))
    results.append(Result("stor01", "stor01/os/time-sync", "os", Status.ERROR,
                          "chronyc tracking exited 1 (506 Cannot talk to daemon): time sync could not be checked"))
    for port in range(1, 7):
        results.append(Result("sw1", f"sw1/port/mtu[Eth1/{port}]", "switch", Status.PASS, seconds=0.01))
        results.append(Result("sw1", f"sw1/port/state[Eth1/{port}]", "switch", Status.PASS, seconds=0.01))
    results.append(Result("sw1", "sw1/port/mtu[Eth1/17]", "switch", Status.FAIL, expected_actual(9216, 1500),
                          expected="9216", actual="1500",
                          fix="racfg deploy site.yaml --limit sw1 --tags switch-config"))
    results.append(Result("sw1", "sw1/qos/pfc[priority 3]", "switch", Status.SKIP,
                          "the emulated switch CLI has no PFC counters"))
    results.append(Result("cluster", "cluster/fabric/links", "fabric", Status.PASS, "8 of 8 cabled links up"))
    return Report(command="validate", site="ra-lab", results=results, started="2024-05-01T10:00:00+0000",
                  elapsed=38.4,
                  meta={"inventory": "inventory/ra-lab.yaml", "run": ".racfg/runs/20240501-validate", "lab": True},
                  notes=["lab substitutions: no GPUs, no ConnectX adapters, emulated switch CLI"],
                  attachments=[str(attachment)] if attachment else [])
