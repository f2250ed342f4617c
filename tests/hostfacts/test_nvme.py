"""nvme list (JSON flat/subsystem/empty, text), lsblk -J -b and lsblk -P, sizes and size tolerance."""

from __future__ import annotations

import pytest

from racfg.hostfacts import ParseError
from racfg.hostfacts.nvme import (
    Drive,
    disks,
    parse_lsblk_json,
    parse_lsblk_pairs,
    parse_nvme_list_json,
    parse_nvme_list_text,
    parse_size,
    sizes_match,
)

FIRECUDA = "Seagate FireCuda 530 ZP4000GM30023"


@pytest.mark.parametrize(
    ("parser", "fixture", "expected"),
    [
        (parse_nvme_list_json, "nvme-list-o-json_empty_netdata-testdata.json", []),
        (parse_nvme_list_json, "nvme-list-o-json_nvme-cli-v2.3_flat-format_netdata-testdata.json", [
            ("/dev/nvme0n1", FIRECUDA, "XXX00YYY", 4000787030016),
            ("/dev/nvme1n1", FIRECUDA, "XXX01YYY", 4000787030016),
        ]),
        (parse_nvme_list_json, "nvme-list-o-json_nvme-cli-v2.11_subsystem-format_netdata-testdata.json", [
            ("/dev/nvme0n1", FIRECUDA, "XXX02YYY", 4000787030016),
            ("/dev/nvme1n1", FIRECUDA, "XXX00YYY", 4000787030016),
            ("/dev/nvme2n1", FIRECUDA, "7VS00KNX", 4000787030016),
        ]),
        (parse_nvme_list_text, "nvme-list_text_nvme-cli-v1.x_Intel-600p_linux-hwmon-list-20191114.txt", [
            ("/dev/nvme0n1", "INTEL SSDPEKKW512G7", "BTPY65250EQN512F", 512_110_000_000),
        ]),
        (parse_lsblk_pairs, "lsblk-P-pairs_Intel-P4610-NVMe_gpud-testdata.txt", [
            ("/dev/sda", "INSPUR", "600062b20b6056002b4c9a038d0f9a62", 959656755200),
            ("/dev/nvme0n1", "INTEL SSDPE2KE032T8", "PHLN231204BN3P2FGN", 3200631791616),  # MODEL is space-padded
            ("/dev/nvme1n1", "INTEL SSDPE2KE032T8", "PHLN2312047T3P2FGN", 3200631791616),
        ]),
    ],
)
def test_drives(read, parser, fixture, expected):
    drives = disks(parser(read(fixture)))
    assert [(d.path, d.model, d.serial, d.size_bytes) for d in drives] == expected


def test_lsblk_json_loop_devices_have_no_model_and_children_follow_parents(read):
    drives = parse_lsblk_json(read("lsblk-J-paths-bytes-with-MODEL-SERIAL_Dell-NVMe_gpud-testdata.json"))
    assert drives[0] == Drive("/dev/loop0", None, None, 67080192, type="loop")
    whole = [d for d in disks(drives) if d.type == "disk"]
    assert [d.path for d in whole] == ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme3n1", "/dev/nvme2n1",
                                       "/dev/nvme7n1", "/dev/nvme6n1", "/dev/nvme5n1", "/dev/nvme4n1"]
    assert (whole[0].model, whole[0].serial, whole[0].size_bytes) == (
        "Dell DC NVMe ISE 7450 RI U.2 960GB", "24014620E9AA", 960197124096)
    assert drives[drives.index(whole[0]) + 1].path == "/dev/nvme0n1p1"


def test_lsblk_pairs_keeps_partitions_and_lvm_out_of_disks(read):
    drives = parse_lsblk_pairs(read("lsblk-P-pairs_Intel-P4610-NVMe_gpud-testdata.txt"))
    assert {d.type for d in drives} == {"disk", "part", "lvm"}
    assert [d.mountpoint for d in disks(drives)] == [None, "/data1", "/data2"]


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
