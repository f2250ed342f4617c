"""The bytes of a Weka-signed drive, written by the tests onto real (lab or file) block devices.

When Weka signs a drive for its cluster it writes a GPT holding one partition of type
``993ec906-b4e2-11e7-a205-a0a8cd3ea1de`` and puts the cluster id (16 bytes, no dashes) at offset
8 of that partition (see Weka's drive-signing notes). ``blkid -p`` then reports ``PTTYPE=gpt``
and ``partx``/``blkid`` a partition of that type. This module builds exactly that: a protective
MBR, the primary and backup GPT headers and partition arrays (CRCs computed as UEFI specifies)
and the signature, as (offset, bytes) chunks so a test can write them with one small script.
``gpt_chunks`` alone writes a plain GPT (one Linux partition) for the wipe guard's lab tests.
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
import zlib

WEKA_PARTITION_TYPE = uuid.UUID("993ec906-b4e2-11e7-a205-a0a8cd3ea1de")
SECTOR = 512
ENTRIES = 128
ENTRY_SIZE = 128
ENTRY_SECTORS = ENTRIES * ENTRY_SIZE // SECTOR  # 32
PARTITION_START = 2048  # LBA: 1 MiB, where partitioning tools start the first partition
LINUX_FILESYSTEM = uuid.UUID("0fc63daf-8483-4772-8e79-3d69d8477de4")  # GPT type of a plain Linux partition


def _header(current: int, backup: int, entries_lba: int, last_lba: int, disk_guid: uuid.UUID,
            entries_crc: int) -> bytes:
    fields = [b"EFI PART", 0x00010000, 92, 0, 0, current, backup, 34, last_lba - 33, disk_guid.bytes_le,
              entries_lba, ENTRIES, ENTRY_SIZE, entries_crc]
    fmt = "<8sIIIIQQQQ16sQIII"
    crc = zlib.crc32(struct.pack(fmt, *fields))
    fields[3] = crc
    return struct.pack(fmt, *fields).ljust(SECTOR, b"\0")


def gpt_chunks(size_bytes: int, seed: uuid.UUID, part_type: uuid.UUID, name: str) -> list[tuple[int, bytes]]:
    """(offset, data) chunks of a GPT holding one partition of ``part_type`` over the whole drive,
    its disk and partition GUIDs derived from ``seed``."""
    last_lba = size_bytes // SECTOR - 1
    first, last = PARTITION_START, last_lba - 33
    disk_guid = uuid.uuid5(seed, "disk")
    entry = struct.pack("<16s16sQQQ72s", part_type.bytes_le, uuid.uuid5(seed, "part").bytes_le,
                        first, last, 0, name.encode("utf-16-le"))
    entries = entry.ljust(ENTRIES * ENTRY_SIZE, b"\0")
    entries_crc = zlib.crc32(entries)
    mbr = bytearray(SECTOR)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\x00\x02\x00", 0xEE, b"\xff\xff\xff", 1, min(last_lba, 0xFFFFFFFF))
    mbr[510:512] = b"\x55\xaa"
    primary = _header(1, last_lba, 2, last_lba, disk_guid, entries_crc)
    backup = _header(last_lba, 1, last_lba - ENTRY_SECTORS, last_lba, disk_guid, entries_crc)
    return [(0, bytes(mbr)), (SECTOR, primary), (2 * SECTOR, entries),
            ((last_lba - ENTRY_SECTORS) * SECTOR, entries), (last_lba * SECTOR, backup)]


def weka_signed_chunks(size_bytes: int, cluster_id: uuid.UUID) -> list[tuple[int, bytes]]:
    """(offset, data) chunks that make a drive of ``size_bytes`` look signed by Weka cluster ``cluster_id``."""
    return [*gpt_chunks(size_bytes, cluster_id, WEKA_PARTITION_TYPE, "weka"),
            (PARTITION_START * SECTOR + 8, cluster_id.bytes)]


def writer_script(device: str, chunks: list[tuple[int, bytes]]) -> str:
    """A shell command (python3 on the target) that writes ``chunks`` onto ``device``."""
    payload = json.dumps([[offset, base64.b64encode(data).decode()] for offset, data in chunks])
    code = ("import base64,json,os,sys\n"
            f"fd=os.open({device!r},os.O_WRONLY)\n"
            f"for off,data in json.loads({payload!r}):\n"
            "    os.pwrite(fd,base64.b64decode(data),off)\n"
            "os.fsync(fd)\nos.close(fd)\n")
    return "python3 -c " + _quote(code)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def write_to_file(path: str, chunks: list[tuple[int, bytes]]) -> None:
    with open(path, "r+b") as f:
        for offset, data in chunks:
            f.seek(offset)
            f.write(data)
