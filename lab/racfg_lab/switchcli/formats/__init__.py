"""Show-command output in each platform's own formats: Onyx ``| json-print`` objects (as Onyx
3.6 prints them, MTU string and all), EOS ``| json``, MLNX-OS IB text blocks, and each
platform's running-config text. The racfg parsers read exactly these, and real switches.
One module per platform (mellanox: Onyx and what MLNX-OS IB shares with it; ib; eos), as the
parsers in racfg.switches.parsers are split; platforms.py picks the formatter of each show command.
"""

from racfg_lab.switchcli.formats.common import to_json
from racfg_lab.switchcli.formats.eos import (
    eos_descriptions,
    eos_descriptions_text,
    eos_dir,
    eos_hostname,
    eos_hostname_text,
    eos_interfaces,
    eos_lldp,
    eos_lldp_detail,
    eos_model_name,
    eos_pfc,
    eos_pfc_counters,
    eos_pfc_text,
    eos_running,
    eos_running_all,
    eos_running_diffs,
    eos_running_section,
    eos_sessions,
    eos_sessions_text,
    eos_startup,
    eos_status_text,
    eos_version,
    eos_version_text,
)
from racfg_lab.switchcli.formats.ib import ib_interfaces, ib_version
from racfg_lab.switchcli.formats.mellanox import (
    mlnx_config_files,
    mlnx_running,
    onyx_interfaces,
    onyx_lldp_remote,
    onyx_pfc,
    onyx_version,
)
from racfg_lab.switchcli.formats.routing import (
    eos_bgp_summary,
    eos_bgp_summary_text,
    eos_routes,
    eos_routes_text,
    onyx_bgp_summary,
    onyx_routes,
)

__all__ = [
    "eos_bgp_summary", "eos_bgp_summary_text", "eos_descriptions", "eos_descriptions_text", "eos_dir", "eos_hostname",
    "eos_hostname_text", "eos_interfaces", "eos_lldp", "eos_lldp_detail", "eos_model_name", "eos_pfc",
    "eos_pfc_counters", "eos_pfc_text", "eos_routes", "eos_routes_text", "eos_running", "eos_running_all",
    "eos_running_diffs", "eos_running_section", "eos_sessions", "eos_sessions_text", "eos_startup", "eos_status_text",
    "eos_version", "eos_version_text", "ib_interfaces", "ib_version", "mlnx_config_files", "mlnx_running",
    "onyx_bgp_summary", "onyx_interfaces", "onyx_lldp_remote", "onyx_pfc", "onyx_routes", "onyx_version", "to_json",
]
