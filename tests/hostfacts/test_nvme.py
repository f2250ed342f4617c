"""lsblk -J -b, sizes and size tolerance."""

from __future__ import annotations

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.nvme import (
    Drive,
    disks,
    parse_lsblk_json,
    parse_size,
    sizes_match,
)


def test_lsblk_json_loop_devices_have_no_model_and_children_follow_parents(read):
    drives = parse_lsblk_json(read("lsblk-J-paths-bytes-with-MODEL-SERIAL_Dell-NVMe_gpud-testdata.json"))
    assert drives[0] == Drive("/dev/loop0", None, None, 67080192, type="loop")
    whole = [d for d in disks(drives) if d.type == "disk"]
    assert [d.path for d in whole] == ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme3n1", "/dev/nvme2n1",
                                       "/dev/nvme7n1", "/dev/nvme6n1", "/dev/nvme5n1", "/dev/nvme4n1"]
    assert (whole[0].model, whole[0].serial, whole[0].size_bytes) == (
        "Dell DC NVMe ISE 7450 RI U.2 960GB", "24014620E9AA", 960197124096)
    assert drives[drives.index(whole[0]) + 1].path == "/dev/nvme0n1p1"


@pytest.mark.parametrize(
    ("text", "size"),
    [("3.2T", 3_200_000_000_000), ("960GB", 960_000_000_000), ("1.09 TiB", round(1.09 * 2**40)),
     ("399.99 GiB", round(399.99 * 2**30)), ("512.11  GB", 512_110_000_000), ("3200631791616", 3200631791616),
     ("4K", 4000)],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("declared", "actual", "matches"),
    [
        ("3.2T", 3200631791616, True),  # Intel P4610 3.2 TB in lsblk -b
        ("4T", 4000787030016, True),  # FireCuda 530 4 TB
        ("960G", 960197124096, True),
        ("3.2T", 3518437208883, True),  # 3.2 TiB: a declaration meant in binary units
        ("3.2T", 1600321314816, False),  # a 1.6 TB drive where 3.2 TB was declared
        ("960G", 7681501126656, False),
    ],
)
def test_sizes_match(declared, actual, matches):
    assert sizes_match(declared, actual) is matches


def test_parse_size_rejects_garbage():
    with pytest.raises(ParseError, match="not a size"):
        parse_size("big")
