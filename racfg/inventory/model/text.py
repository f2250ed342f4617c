"""What each kind of inventory string may hold: the schema's constrained text types.

Every string field of the schema is one of these, constrained to what it names (a host name, a
DNS name, an absolute path, a sysctl key ...), so a value that reaches a config file, a command
line or Ansible cannot carry anything else. What no string may hold at all (control characters,
Jinja markers) is checked on the whole loaded file (racfg.inventory.inert); these types say, in
their error, what is allowed. ``hosts[].vars`` names are ``VarName``: Ansible's connection, become
and shell variables, racfg's own and Ansible's reserved names are refused (``RESERVED_VARS``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DNS_NAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")
_ABS_PATH = re.compile(r"^/[A-Za-z0-9._+@%=,:/-]*$")
_PATH = re.compile(r"^(?!-)[A-Za-z0-9._~+@%=,:/-]+$")
_URL = re.compile(r"^https?://[A-Za-z0-9._~:/?#@!$&+,;=%-]+$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+~:-]*$")
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SYSCTL_KEY = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+$")
_PRINTABLE_ASCII = re.compile(r"^[ -~]*$")
_WORD = re.compile(r"^[A-Za-z0-9_.=,:/+@%-]+$")
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PORT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/:._-]*$")
_MOUNT_OPTION = re.compile(r"^[A-Za-z0-9_.=:/+@%-]+$")
_ARGS = re.compile(r"^[A-Za-z0-9_.=,:/+@% -]*$")
_FIGURE = re.compile(r"^[A-Za-z0-9_.-]+$")
TEXT_MAX = 256


def _check(pattern: re.Pattern[str], allowed: str, max_length: int = 4096) -> Callable[[str], str]:
    def check(value: str) -> str:
        if len(value) > max_length:
            raise ValueError(f"longer than {max_length} characters")
        if not pattern.match(value):
            raise ValueError(f"expected {allowed}")
        return value

    return check


def _no_dotdot(check: Callable[[str], str]) -> Callable[[str], str]:
    """A path check that also refuses '..' components (a path must name the place it says)."""

    def both(value: str) -> str:
        check(value)
        if ".." in value.split("/"):
            raise ValueError("a path may not hold '..' components")
        return value

    return both


def _mount_point(value: str) -> str:
    if value == "/":
        raise ValueError("a mount point cannot be /")
    return value


def _host_or_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    if len(value) > 253 or not _DNS_NAME.match(value):
        raise ValueError("expected a host name or an IP address, e.g. ntp1.example.org or 198.18.0.1")
    return value


def _dns_name(value: str) -> str:
    if len(value) > 253 or not _DNS_NAME.match(value):
        raise ValueError("expected a DNS name: labels of letters, digits and '-' joined by '.', e.g. example.org")
    return value


def _source(value: str) -> str:
    """A controller path or an http(s) URL the hosts fetch."""
    if value.startswith(("http://", "https://")):
        return _check(_URL, "an http(s) URL without blanks or quotes")(value)
    return _no_dotdot(_check(_PATH, _PATH_ALLOWED))(value)


def _sysctl_value(value: str | int) -> str | int:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("expected an integer or a string")
    if isinstance(value, str) and (len(value) > 1024 or not _PRINTABLE_ASCII.match(value)):
        raise ValueError("expected one line of printable ASCII (as sysctl -w takes it), at most 1024 characters")
    return value


def _text(value: str) -> str:
    if len(value) > TEXT_MAX:
        raise ValueError(f"longer than {TEXT_MAX} characters")
    return value


_PATH_ALLOWED = "a path of letters, digits and . _ ~ + @ % = , : / - (no blanks, no '..', not starting with '-')"

# Ansible's variables a host's ``vars`` may not set: besides every ansible_* (connection, become,
# shell, interpreter) and racfg_* (what racfg renders itself), the names Ansible gives a meaning of its
# own: its magic variables and the play keywords it reserves (ansible.vars.reserved; a unit test keeps
# this list a superset of the installed ansible-core's).
RESERVED_VARS = frozenset({
    # play, block and task keywords
    "action", "always", "any_errors_fatal", "args", "async", "async_val", "become", "become_exe", "become_flags",
    "become_method", "become_user", "block", "changed_when", "check_mode", "collections", "connection",
    "debugger", "delay", "delegate_facts", "delegate_to", "diff", "environment", "fact_path", "failed_when",
    "force_handlers", "gather_facts", "gather_subset", "gather_timeout", "handlers", "hosts", "ignore_errors",
    "ignore_unreachable", "local_action", "loop", "loop_control", "loop_with", "max_fail_percentage",
    "module_defaults", "name", "no_log", "notify", "order", "poll", "port", "post_tasks", "pre_tasks",
    "register", "remote_user", "rescue", "retries", "roles", "run_once", "serial", "strategy", "tags", "tasks",
    "throttle", "timeout", "until", "vars", "vars_files", "vars_prompt", "when",
    "validate_argspec",  # a play keyword ansible-core 2.21 reserves (2.16-2.19 do not)
    # magic variables
    "group_names", "groups", "hostvars", "inventory_dir", "inventory_file", "inventory_hostname",
    "inventory_hostname_short", "item", "omit", "play_hosts", "playbook_dir", "role_name", "role_names",
    "role_path",
    # the templating engine's globals
    "cycler", "dict", "joiner", "lipsum", "lookup", "namespace", "now", "q", "query", "range", "undef",
})
RESERVED_PREFIXES = ("ansible_", "racfg_", "with_")


def _var_name(value: str) -> str:
    if not _VAR.match(value):
        raise ValueError("expected an Ansible variable name: letters, digits and '_', not starting with a digit")
    lowered = value.lower()
    if lowered.startswith(RESERVED_PREFIXES) or lowered in RESERVED_VARS:
        raise ValueError(f"'{value}' may not be set here: vars cannot set Ansible's connection, become or shell "
                         "variables (ansible_*), racfg's own (racfg_*) or Ansible's reserved names "
                         "(see docs/inventory.md, 'Values racfg refuses')")
    return value


HostOrAddress = Annotated[str, AfterValidator(_host_or_address)]
DnsName = Annotated[str, AfterValidator(_dns_name)]
AbsPath = Annotated[str, AfterValidator(_no_dotdot(_check(
    _ABS_PATH, "an absolute path of letters, digits and . _ + @ % = , : / - (no blanks, no '..')")))]
MountPoint = Annotated[AbsPath, AfterValidator(_mount_point)]
MountOption = Annotated[str, AfterValidator(_check(
    _MOUNT_OPTION, "one mount option of letters, digits and . _ = : / + @ % - (no ',' or blank)", 255))]
Args = Annotated[str, AfterValidator(_check(
    _ARGS, "arguments: words of letters, digits and . _ = , : / + @ % - separated by blanks", 1024))]
FigureName = Annotated[str, AfterValidator(_check(_FIGURE, "a figure name of letters, digits, '_', '.', '-'", 128))]
LocalPath = Annotated[str, AfterValidator(_no_dotdot(_check(_PATH, _PATH_ALLOWED)))]
Source = Annotated[str, AfterValidator(_source)]
Version = Annotated[str, AfterValidator(_check(
    _VERSION, "a version: letters, digits and . _ + ~ : - (e.g. 4.5-1.0.1.0)", 128))]
UserName = Annotated[str, AfterValidator(_check(
    _USER, "a user name: letters, digits, '_', '.', '-', starting with a letter or '_', at most 32", 32))]
EnvName = Annotated[str, AfterValidator(_check(_ENV, "an environment variable name: letters, digits, '_'", 255))]
FsName = Annotated[str, AfterValidator(_check(_FS_NAME, "a filesystem name: letters, digits, '_', '.', '-'", 64))]
SysctlKey = Annotated[str, AfterValidator(_check(
    _SYSCTL_KEY, "a sysctl key a.b.c: parts of letters, digits, '_', '-' joined by '.' (no '/', no '..')", 255))]
SysctlValue = Annotated[str | int, AfterValidator(_sysctl_value)]
Text = Annotated[str, AfterValidator(_text)]
Word = Annotated[str, AfterValidator(_check(_WORD, "one word of letters, digits and . _ = , : / + @ % -", 255))]
Image = Annotated[str, AfterValidator(_check(_IMAGE, "a container image, e.g. nvcr.io/nvidia/pytorch:24.05-py3", 255))]
VarName = Annotated[str, AfterValidator(_var_name)]
Port = Annotated[str, AfterValidator(_check(_PORT, "a port name of letters, digits and / : . _ - (e.g. Eth1/1)", 64))]

__all__ = [
    "RESERVED_PREFIXES", "RESERVED_VARS", "TEXT_MAX", "AbsPath", "Args", "DnsName", "EnvName", "FigureName",
    "FsName", "HostOrAddress", "Image", "LocalPath", "MountOption", "MountPoint", "Port", "Source", "SysctlKey",
    "SysctlValue", "Text", "UserName", "VarName", "Version", "Word",
]
