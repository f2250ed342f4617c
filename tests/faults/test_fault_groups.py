"""sitelab.separate_groups: the drift suite's groups of faults, one drift run each, are only as
precise as their targets are separate."""

from __future__ import annotations

from sitelab import FAULTS, separate_groups


def test_every_fault_is_in_one_group_and_no_two_in_a_group_share_a_target() -> None:
    groups = separate_groups(FAULTS)
    assert sorted(f.name for g in groups for f in g) == sorted(f.name for f in FAULTS)
    for group in groups:
        for i, fault in enumerate(group):
            assert all(not fault.targets & other.targets for other in group[i + 1:]), [f.name for f in group]
    assert len(groups) < len(FAULTS)


def test_a_fault_sharing_a_target_with_every_group_starts_a_new_one() -> None:
    sw1 = [f for f in FAULTS if "sw1" in f.targets]
    groups = separate_groups(tuple(sw1))
    assert [len(g) for g in groups] == [1] * len(sw1)
