"""chronyc tracking and timedatectl status recordings."""

from __future__ import annotations

import pytest

from racfg.hostfacts.chrony import parse_chronyc_tracking


@pytest.mark.parametrize(
    ("fixture", "ref_id", "ref_name", "stratum", "offset", "leap"),
    [
        ("chronyc-tracking_datakit-test.txt", "CA760182", "202.118.1.130", 2, 0.0, "Normal"),
        ("chronyc-tracking_hostname-refid_fast-offset_scale-network-PR-121.txt", "B280042C", "ntp1.bytestacker.com",
         3, 0.000260112, "Normal"),  # "fast": the system clock is ahead
        ("chronyc-tracking_openSUSE-Leap15_rockstor-issue-2098.txt", "55C7D664", "85.199.214.100", 2, -0.000052616,
         "Normal"),
    ],
)
def test_chronyc_tracking(read, fixture, ref_id, ref_name, stratum, offset, leap):
    tracking = parse_chronyc_tracking(read(fixture))
    assert (tracking.reference_id, tracking.reference_name, tracking.stratum, tracking.leap_status) == (
        ref_id, ref_name, stratum, leap)
    assert tracking.offset_seconds == pytest.approx(offset, abs=1e-12)
    assert tracking.synchronised


def test_chronyc_tracking_not_synchronised(read):
    # The datakit recording with the three lines chronyd prints before it has selected a source.
    text = (read("chronyc-tracking_datakit-test.txt")
            .replace("CA760182 (202.118.1.130)", "00000000 ()")
            .replace("Stratum         : 2", "Stratum         : 0")
            .replace("Leap status     : Normal", "Leap status     : Not synchronised"))
    tracking = parse_chronyc_tracking(text)
    assert (tracking.reference_id, tracking.reference_name, tracking.stratum) == ("00000000", None, 0)
    assert not tracking.synchronised
