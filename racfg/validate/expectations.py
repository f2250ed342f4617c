"""What the roles promise, read from the roles themselves.

A validator must expect exactly what deploy sets, or a clean cluster fails validation (or a
broken one passes). So the expected kernel parameters and packages are read from the roles'
``defaults/main.yml`` (the one place they are written) combined with the rendered inventory,
the same way the roles combine them.
"""

from __future__ import annotations

from typing import Any

from racfg.paths import role_defaults


def weka_host(gv: dict[str, Any], hv: dict[str, Any]) -> bool:
    """Hosts that run Weka: storage backends, and dgx clients when the filesystem is mounted there."""
    weka = gv.get("racfg_weka")
    if not weka:
        return False
    return hv.get("racfg_role") == "storage" or (hv.get("racfg_role") == "dgx" and weka.get("clients") == "dgx")


def drive_models_unchecked(hv: dict[str, Any]) -> str | None:
    """Why this host's declared drive models are not compared (the nvme_storage role's own switch, which
    a provider sets: the lab's loop devices report no model), or None when they are."""
    if hv.get("nvme_storage_check_model", True) is not False:
        return None
    key = "nvme_storage_check_model_reason"
    return str(hv.get(key) or role_defaults("nvme_storage")[key])


def normalise_sysctl(value: object) -> str:
    """``4096  87380 134217728`` and ``4096\\t87380\\t134217728`` are the same setting."""
    return " ".join(str(value).split())


def sysctl_settings(gv: dict[str, Any], hv: dict[str, Any]) -> dict[str, str]:
    """The kernel parameters the common role sets on this host (profile + overrides + NUMA)."""
    common = role_defaults("common")
    tuning = gv.get("racfg_tuning") or {}
    profile = tuning.get("profile", "throughput-100g")
    settings: dict[str, Any] = dict(common.get("common_sysctl_profiles", {}).get(profile, {}) or {})
    settings.update(tuning.get("sysctl") or {})
    if weka_host(gv, hv) and common.get("common_numa_balancing_off_for_weka", True):
        settings["kernel.numa_balancing"] = 0
    return {k: normalise_sysctl(v) for k, v in settings.items()}


def sysctl_file() -> str:
    return str(role_defaults("common").get("common_sysctl_file", "/etc/sysctl.d/90-racfg.conf"))


def expected_packages(gv: dict[str, Any], hv: dict[str, Any], codename: str) -> dict[str, str]:
    """package -> the role that installs it (so a missing one names its fix)."""
    out: dict[str, str] = {"chrony": "common"}
    for package in role_defaults("common").get("common_lldp_packages", []) or []:
        out[str(package)] = "common"
    array = gv.get("racfg_array") or {}
    if array and array.get("clients", "dgx") == hv.get("racfg_role"):
        for package in (role_defaults("nfs_client").get("nfs_client_packages") or {}).get(array.get("protocol"), []):
            out[str(package)] = "nfs_client"
    ofed = hv.get("racfg_ofed", gv.get("racfg_ofed")) or {}  # a provider's replacement (lab: inbox) wins
    if ofed.get("flavor") == "inbox":
        defaults = role_defaults("ofed")
        by_release = defaults.get("ofed_inbox_packages_by_release", {}) or {}
        for package in by_release.get(codename, defaults.get("ofed_inbox_packages", [])):
            out[str(package)] = "ofed"
    return out
