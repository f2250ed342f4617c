"""The virtual lab: an inventory's hosts, switches and cabling as real Linux machines on one host.

``racfg lab up FILE`` builds it (see lifecycle.py), ``racfg lab down`` removes it (teardown.py).
The rest of racfg reaches a running lab through the functions re-exported here.
"""

from racfg.lab.api import (
    is_lab_up,
    lab_exec,
    lab_known_hosts,
    lab_ssh_config,
    lab_ssh_key,
    set_link,
    start_host,
    stop_host,
    switch_password,
)
from racfg.lab.lifecycle import down, up
from racfg.lab.teardown import leftovers, teardown_all

__all__ = [
    "down",
    "is_lab_up",
    "lab_exec",
    "lab_known_hosts",
    "lab_ssh_config",
    "lab_ssh_key",
    "leftovers",
    "set_link",
    "start_host",
    "stop_host",
    "switch_password",
    "teardown_all",
    "up",
]
