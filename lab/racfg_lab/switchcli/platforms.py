"""The per-platform table: each platform's CLI (its folder's grammar.py: prompts, errors, paging
commands, the command grammar and which formatter prints each show command), by name, and the text
forms of EOS's JSON show commands. The engine is shared; only the platforms differ.
"""

from __future__ import annotations

from racfg_lab.switchcli.eos import formats as f
from racfg_lab.switchcli.eos import route_formats
from racfg_lab.switchcli.eos.grammar import EOS
from racfg_lab.switchcli.grammar import Platform
from racfg_lab.switchcli.mlnx.grammar import MLNXOS_IB, ONYX

__all__ = ["PLATFORMS", "TEXT_FORMS", "Platform"]

PLATFORMS = {p.name: p for p in (ONYX, MLNXOS_IB, EOS)}
TEXT_FORMS = {("eos", "version"): f.eos_version_text, ("eos", "hostname"): f.eos_hostname_text,
              ("eos", "descriptions"): f.eos_descriptions_text, ("eos", "pfc"): f.eos_pfc_text,
              ("eos", "sessions"): f.eos_sessions_text, ("eos", "bgp_summary"): route_formats.eos_bgp_summary_text,
              ("eos", "routes"): route_formats.eos_routes_text}
