"""The path matrix on tables: each pattern of failing paths is filed on the one end (or path) that
explains it, unreachable told from MTU, and a healthy sender never named."""

from __future__ import annotations

from racfg.validate.pathmatrix import Outcome, attribute
from racfg.validate.probe import PingPath

OK, MTU, UNREACHABLE = Outcome.OK, Outcome.MTU, Outcome.UNREACHABLE
DGX = ("dgx01", "dgx02", "dgx03")
STOR = ("stor01", "stor02", "stor03")


def lab_paths() -> list[PingPath]:
    """As probe.ping_paths makes them: every dgx and storage NIC to every other storage NIC."""
    return [PingPath(src, "data0", dst, "data0", f"10.0.0.{i}", 8972)
            for i, dst in enumerate(STOR) for src in DGX + STOR if src != dst]


def outcomes(paths: list[PingPath], bad: dict[str, Outcome]) -> dict[str, Outcome]:
    return {p.label: bad.get(p.label, OK) for p in paths}


def failing(verdicts) -> dict[str, list[tuple[str, str]]]:
    """host -> [(role, kind)] of every finding, only hosts with one."""
    return {host: [(f.role, str(f.kind)) for f in v.findings] for (host, _), v in verdicts.items() if v.findings}


def test_a_clean_matrix_files_nothing_and_counts_every_path_through_each_nic() -> None:
    paths = lab_paths()
    verdicts = attribute(paths, outcomes(paths, {}))
    assert failing(verdicts) == {}
    assert verdicts[("stor01", "data0")].measured == 5 + 2
    assert verdicts[("dgx01", "data0")].measured == 3


def test_inbound_only_names_the_destination_once_and_no_sender() -> None:
    """stor01 answering on a moved address: every path into it fails, its own outbound paths pass."""
    paths = lab_paths()
    bad = {p.label: UNREACHABLE for p in paths if p.dst_host == "stor01"}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"stor01": [("destination", "unreachable")]}
    (finding,) = verdicts[("stor01", "data0")].findings
    assert len(finding.outcomes) == 5
    assert finding.describe(8972) == ("all 5 inbound paths to stor01:data0 fail (small ping fails: unreachable)")


def test_outbound_only_names_the_source_with_mtu() -> None:
    """dgx02 behind a switch port at MTU 1500: small pings pass, every DF ping it sends fails."""
    paths = lab_paths()
    bad = {p.label: MTU for p in paths if p.src_host == "dgx02"}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"dgx02": [("source", "mtu")]}
    assert "9000-byte DF ping fails: MTU" in verdicts[("dgx02", "data0")].findings[0].describe(8972)


def test_both_directions_name_the_nic_once() -> None:
    """stor01's switch port shut: nothing in, nothing out."""
    paths = lab_paths()
    bad = {p.label: UNREACHABLE for p in paths if "stor01" in (p.src_host, p.dst_host)}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"stor01": [("both", "unreachable")]}
    assert len(verdicts[("stor01", "data0")].findings[0].outcomes) == 7


def test_a_lone_failing_path_is_named_as_that_path_on_its_sender() -> None:
    paths = lab_paths()
    lone = "dgx01:data0->stor02:data0"
    verdicts = attribute(paths, outcomes(paths, {lone: MTU}))
    assert failing(verdicts) == {"dgx01": [("path", "mtu")]}
    assert verdicts[("dgx01", "data0")].findings[0].describe(8972).startswith(f"path {lone} fails")


def test_a_single_path_site_names_the_path_not_an_end() -> None:
    paths = [PingPath("dgx01", "data0", "stor01", "data0", "10.0.0.1", 8972)]
    verdicts = attribute(paths, {paths[0].label: UNREACHABLE})
    assert failing(verdicts) == {"dgx01": [("path", "unreachable")]}
    assert verdicts[("stor01", "data0")].ok


def test_a_destination_with_one_inbound_path_is_named_when_its_sender_passes_elsewhere() -> None:
    paths = [PingPath("dgx01", "data0", "stor01", "data0", "10.0.0.1", 8972),
             PingPath("dgx01", "data0", "stor02", "data0", "10.0.0.2", 8972)]
    verdicts = attribute(paths, {paths[0].label: UNREACHABLE, paths[1].label: OK})
    assert failing(verdicts) == {"stor01": [("destination", "unreachable")]}


def test_unreachable_is_told_from_mtu_and_a_mixed_end_reads_unreachable() -> None:
    paths = lab_paths()
    into = [p for p in paths if p.dst_host == "stor02"]
    bad = {p.label: (MTU if i % 2 else UNREACHABLE) for i, p in enumerate(into)}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"stor02": [("destination", "unreachable")]}
    only_mtu = attribute(paths, outcomes(paths, {p.label: MTU for p in into}))
    assert failing(only_mtu) == {"stor02": [("destination", "mtu")]}


def test_two_bad_ends_are_each_named_and_a_path_between_them_counted_once_per_end() -> None:
    paths = lab_paths()
    bad = {p.label: MTU for p in paths if p.src_host == "dgx01" or p.dst_host == "stor03"}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"dgx01": [("source", "mtu")], "stor03": [("destination", "mtu")]}


def test_paths_of_an_unprobed_source_count_nowhere() -> None:
    paths = lab_paths()
    known = {p.label: OK for p in paths if p.src_host != "dgx03"}
    verdicts = attribute(paths, known)
    assert failing(verdicts) == {}
    assert verdicts[("dgx03", "data0")].measured == 0


def test_an_ends_kind_is_read_from_the_paths_it_alone_explains() -> None:
    """dgx02 at MTU 1500 while stor01 is down: dgx02's path to stor01 fails unreachable, but that is
    stor01's; what dgx02 alone explains is MTU."""
    paths = lab_paths()
    bad = {p.label: UNREACHABLE for p in paths if "stor01" in (p.src_host, p.dst_host)}
    bad |= {p.label: MTU for p in paths if p.src_host == "dgx02" and p.dst_host != "stor01"}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"dgx02": [("source", "mtu")], "stor01": [("both", "unreachable")]}
    assert len(verdicts[("dgx02", "data0")].findings[0].outcomes) == 3


def test_a_sender_whose_every_destination_is_broken_is_not_named() -> None:
    """stor02 answering on a moved address and stor03 behind a port at MTU 1500: stor01 sends only to
    those two, so all its outbound paths fail; they are theirs, and stor01 is healthy."""
    paths = lab_paths()
    bad = {p.label: UNREACHABLE for p in paths if p.dst_host == "stor02"}
    bad |= {p.label: MTU for p in paths if "stor03" in (p.src_host, p.dst_host) and p.label not in bad}
    verdicts = attribute(paths, outcomes(paths, bad))
    assert failing(verdicts) == {"stor02": [("destination", "unreachable")], "stor03": [("both", "mtu")]}


def test_a_path_the_hosts_routing_sends_wrong_is_named_as_the_route_with_its_lookup() -> None:
    """By destination a blackhole route on dgx01 fails its path to stor02 (bound to the NIC it passes):
    the finding says the route and carries what ``ip route get`` answered."""
    paths = lab_paths()
    lone = "dgx01:data0->stor02:data0"
    verdicts = attribute(paths, outcomes(paths, {lone: Outcome.ROUTE}), {lone: "route: blackhole 10.0.0.1"})
    assert failing(verdicts) == {"dgx01": [("path", "route")]}
    assert verdicts[("dgx01", "data0")].findings[0].describe(8972) == (
        f"path {lone} fails (by destination the host's routing sends it wrong; route: blackhole 10.0.0.1)")


def test_a_wrong_neighbour_entry_is_carried_as_the_cause_of_the_unreachable_path() -> None:
    paths = lab_paths()
    lone = "dgx01:data0->stor02:data0"
    cause = "neighbour entry 10.0.0.1 lladdr 02:00:de:ad:be:ef dev data0 (permanent), but stor02:data0 has 0e:12"
    verdicts = attribute(paths, outcomes(paths, {lone: UNREACHABLE}), {lone: cause})
    assert verdicts[("dgx01", "data0")].findings[0].causes == (cause,)
    assert verdicts[("dgx01", "data0")].findings[0].describe(8972).endswith(f"unreachable; {cause})")
