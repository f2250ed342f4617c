"""weka CLI recordings (vendor docs and weka-operator): status text and JSON, cluster tables, fs."""

from __future__ import annotations

import pytest

from racfg.hostfacts.weka import (
    parse_cluster_containers,
    parse_cluster_drives,
    parse_fs,
    parse_status,
    parse_table,
)


@pytest.mark.parametrize(
    ("fixture", "name", "status", "version", "backends", "drives", "io_status", "rebuilding", "ok"),
    [
        ("weka-status_3.7.2-healthy_docs.txt", "WekaProd", "OK", "3.7.2", (8, None), (48, None), None, False, True),
        ("weka-status_3.7.2-degraded-rebuild_docs.txt", "WekaProd", "DEGRADED", "3.7.2", (7, None), (42, None), None,
         True, False),
        ("weka-status_4.0.0-degraded-rebuild_docs.txt", "WekaProd", "DEGRADED", "4.0.0", (7, None), (42, None),
         "STARTED", True, False),
        ("weka-status_4.2.9-healthy_docs.txt", "DataSphere", "OK", "4.2.9", (18, None), (12, None), "STARTED", False,
         True),
        ("weka-status_4.4.x-k8s_weka-operator-doc.txt", "cluster-name", "OK", None, (17, 21), (36, None), "STARTED",
         False, True),
        ("weka-status-J_4.4.2-k8s_weka-operator-doc.json", "weka-infra", "OK", "4.4.2.157-k8s.2", (12, 13), (36, 36),
         "STARTED", False, True),
    ],
)
def test_status(read, fixture, name, status, version, backends, drives, io_status, rebuilding, ok):
    result = parse_status(read(fixture))
    assert (result.cluster_name, result.status, result.version) == (name, status, version)
    assert (result.backends_up, result.backends_total) == backends
    assert (result.drives_up, result.drives_total) == drives
    assert (result.io_status, result.rebuilding, result.ok) == (io_status, rebuilding, ok)


def test_status_text_and_json_of_one_cluster_agree(read):
    text = parse_status(read("weka-status_4.4.x-k8s_weka-operator-doc.txt"))
    json = parse_status(read("weka-status-J_4.4.2-k8s_weka-operator-doc.json"))
    assert (text.guid, text.protection) == (json.guid, json.protection) == ("550c68b6-8f64-4073-8086-efc3ba69207e",
                                                                            "3+2")


@pytest.mark.parametrize(
    ("fixture", "count", "first", "last"),
    [
        ("weka-cluster-container_4.3.0_docs.txt", 30,
         (0, "av299-0", "drives0", "UP", "4.3.0", None, "DOM-000"),
         (29, "av299-9", "frontend0", "UP", "4.3.0", None, "DOM-009")),
        ("weka-cluster-container_4.3.2-CONTAINER-ID-header_docs.txt", 16,
         (0, "DataSphere-0", "drives0", "UP", "4.3.2", None, "DOM-000"),
         (15, "DataSphere-0", "dataserv0", "UP", "4.3.2", None, None)),  # empty FAILURE DOMAIN cell
        ("weka-cluster-host-v_3.13.6-invalid-FD_docs.txt", 7,
         (0, "drp-srcf-ffb001", "default", "UP", "3.13.6", "backend", None),
         (6, "drp-srcf-ffb007", "default", "UP", "3.13.6", "backend", None)),
        ("weka-cluster-host-b-v-output-fd_4.x-named-FD_docs.txt", 8,
         (None, "ip-172-31-39-174.ec2.internal", None, None, None, None, "FD_16"),
         (None, "ip-172-31-36-77.ec2.internal", None, None, None, None, "FD_30")),
    ],
)
def test_cluster_containers(read, fixture, count, first, last):
    rows = parse_cluster_containers(read(fixture))
    as_tuple = [(r.id, r.hostname, r.container, r.status, r.release, r.mode, r.failure_domain) for r in rows]
    assert (len(rows), as_tuple[0], as_tuple[-1]) == (count, first, last)


def test_cluster_host_v_keeps_the_failure_domain_columns(read):
    rows = parse_table(read("weka-cluster-host-v_3.13.6-invalid-FD_docs.txt"))
    assert [(r["failure domain type"], r["failure domain id"]) for r in rows][:2] == [("INVALID", "10"),
                                                                                     ("INVALID", "2")]


@pytest.mark.parametrize(
    ("fixture", "count", "inactive", "size"),
    [
        ("weka-cluster-drive_4.2-with-INACTIVE-drive_docs.txt", 20, [(57, "void-new-0")], "1.09 TiB"),
        ("weka-cluster-drive_4.3.0-elided_docs.txt", 6, [], "399.99 GiB"),  # the doc's "." lines are skipped
    ],
)
def test_cluster_drives(read, fixture, count, inactive, size):
    drives = parse_cluster_drives(read(fixture))
    assert len(drives) == count
    assert [(d.disk_id, d.hostname) for d in drives if not d.active] == inactive
    assert {d.size for d in drives} == {size}


def test_cluster_process_table_blank_cells(read):
    rows = parse_table(read("weka-cluster-process_4.3.2_docs.txt"))
    assert len(rows) == 32
    assert (rows[0]["roles"], rows[0]["cpu"], rows[0]["memory"], rows[0]["last failure"]) == (
        "MANAGEMENT", "", "N/A", "Host joined a new cluster (1 hour ago)")
    assert (rows[1]["roles"], rows[1]["network"], rows[1]["cpu"], rows[1]["last failure"]) == (
        "DRIVES", "DPDK", "2", "")


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("weka-fs_4.x-two-filesystems_docs.txt", [(0, "default", "default", True), (1, "new_fs", "default", True)]),
        ("weka-fs_3.x-legacy-boxed-table_docs.txt", [(0, "default", "default", True)]),
    ],
)
def test_fs(read, fixture, expected):
    assert [(fs.id, fs.name, fs.group, fs.ready) for fs in parse_fs(read(fixture))] == expected
