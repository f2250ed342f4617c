#!/usr/bin/python
"""Ansible module racfg_switch: configure one RA switch through racfg's netmiko drivers.

Runs on the controller (ansible_connection: local) with the Python that runs Ansible, so it
imports racfg. The password comes from the ``password`` parameter (``racfg deploy`` passes it, the lab's
generated one for ``lab: true`` switches) or is resolved at run time from the switch's
credentials reference (env var, 0600 file, ansible-vault file); it is never logged or returned.
Resolving it here serves a plain ``ansible-playbook`` run only: a racfg run's environment carries
no password variable (racfg.secret_env), so racfg resolves every switch's password and passes it.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: racfg_switch
short_description: Configure an Onyx, EOS or MLNX-OS InfiniBand switch from the racfg inventory
description:
  - Reads the switch's interfaces, PFC/RoCE, version and LLDP, computes the minimal commands that make
    the cabled ports match the inventory (description, MTU, speed, admin up) and removes any PFC, RoCE
    or lossless configuration, pushes them, verifies by reading state again, and saves the config.
  - In check mode nothing is sent to the switch beyond show commands; the result carries the diff.
options:
  switch:
    description: The rendered racfg_switch host var (name, platform, model, mgmt, credentials, site ...).
    type: dict
    required: true
  ports:
    description: The rendered racfg_switch_ports host var (port, description, mtu, speed_gbps, host, nic).
    type: list
    elements: dict
    required: true
  fabric:
    description: The rendered racfg_fabric group var (pfc, roce, switch_mtu ...).
    type: dict
    default: {}
  routing:
    description: The rendered racfg_switch_routing host var of a leaf-spine site (role, ASN, ISLs, host subnets,
      BGP neighbours, maximum paths); the switch then gets routed ISLs, host VLAN interfaces and BGP.
    type: dict
  password:
    description: The switch's password (no_log); by default resolved from switch.credentials (password_env,
      password_file, password_vault; a lab: true switch needs it passed, as racfg deploy does).
    type: str
  save:
    description: Save the running config (configuration write / write memory) after a change.
    type: bool
    default: true
  timeout:
    description: SSH connect and authentication timeout in seconds.
    type: int
    default: 10
  known_hosts:
    description: The site's known_hosts file (the rendered racfg_known_hosts, from site.known_hosts), read
      instead of the user's ~/.ssh/known_hosts; /etc/ssh/ssh_known_hosts is read too. A switch whose host key
      these files (and provider_known_hosts) do not list is refused before its password is sent.
    type: path
  provider_known_hosts:
    description: A provider's known_hosts file read besides them (racfg deploy passes the lab's).
    type: path
  command_timeout:
    description: The longest wait in seconds for the switch's answer to a config line. Past it the session
      counts as lost; a session lost in the middle of a plan is given up and the switch put back as it was
      on a new one (Onyx, MLNX-OS; the applied lines undone, last first) or its config session aborted (EOS).
    type: int
    default: 60
  facts:
    description: Check mode only. The switch's facts as read already in this run (racfg_switch_facts, as
      racfg drift reads each switch once for all its layers); the plan is made from them without logging in.
    type: dict
"""

RETURN = r"""
changes:
  description: What changes (or would change), one line each, e.g. "1/1 mtu 1500 -> 9000".
  type: list
  returned: always
commands:
  description: The CLI lines typed (or, in check mode, that would be typed).
  type: list
  returned: always
racfg_cannot_run:
  description: On failure, true when the switch could not be worked on (unreachable, refused login, a session
    lost); racfg deploy then exits 3 (could not run) instead of 1. With a session lost in the middle of a plan,
    as_before says whether the switch holds nothing of the plan, remaining the plan's lines it may still hold
    and by_hand the CLI lines that take them back.
  type: bool
  returned: failed
session_diff:
  description: EOS only, the switch's own show session-config diffs of the committed change.
  type: str
  returned: when changed on EOS
racfg_switch_facts:
  description: The switch's facts (interfaces, PFC, version, LLDP, config saved) as read at the start, when
    nothing changed or in check mode, i.e. the switch as it now is; racfg deploy keeps them as the
    switch's baseline, and racfg drift as its facts now, instead of logging in a second time.
  type: dict
  returned: when unchanged, or in check mode
"""

from pathlib import Path  # noqa: E402 - Ansible wants the docs first

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "switch": {"type": "dict", "required": True},
            "ports": {"type": "list", "elements": "dict", "required": True},
            "fabric": {"type": "dict", "default": {}},
            "routing": {"type": "dict"},
            "password": {"type": "str", "no_log": True},
            "save": {"type": "bool", "default": True},
            "timeout": {"type": "int", "default": 10},
            "known_hosts": {"type": "path"},
            "provider_known_hosts": {"type": "path"},
            "command_timeout": {"type": "int", "default": 60},
            "facts": {"type": "dict"},
        },
        supports_check_mode=True,
    )
    try:
        from racfg.errors import CannotRunError, RacfgError
        from racfg.ssh.known_hosts import KnownHosts
        from racfg.switches import (
            SwitchConfigError,
            SwitchFacts,
            SwitchTarget,
            apply_switch,
            intended_from_vars,
            resolve_password,
        )
    except ImportError as exc:
        module.fail_json(msg=f"racfg is not importable by {module._name} ({exc}); run Ansible from racfg's Python")
        return
    params = module.params
    switch = params["switch"]
    if params["facts"] and not module.check_mode:
        module.fail_json(msg="facts read earlier plan a check only: a change reads the switch it changes")
        return
    try:
        intended = intended_from_vars(switch, params["ports"], params["fabric"], params["routing"])
        password = params["password"] or resolve_password(
            switch.get("credentials") or {}, site=str(switch.get("site", "")), name=str(switch["name"]))
        module.no_log_values.add(password)
        site_file, provider_file = params["known_hosts"], params["provider_known_hosts"]
        known_hosts = KnownHosts(Path(site_file) if site_file else None, Path(provider_file) if provider_file else None)
        target = SwitchTarget.from_vars(switch, password, timeout=float(params["timeout"]), known_hosts=known_hosts,
                                        command_timeout=float(params["command_timeout"]))
        known = SwitchFacts.from_dict(params["facts"]) if params["facts"] else None
        result = apply_switch(target, intended, check=module.check_mode, save=params["save"], facts=known)
    except SwitchConfigError as exc:
        module.fail_json(msg=str(exc), rejected=exc.rejected, applied=exc.applied, not_applied=exc.not_applied)
        return
    except CannotRunError as exc:  # the switch could not be worked on: racfg deploy exits 3
        module.fail_json(msg=str(exc), racfg_cannot_run=True, **{
            key: getattr(exc, key) for key in ("as_before", "remaining", "by_hand") if hasattr(exc, key)})
        return
    except RacfgError as exc:
        module.fail_json(msg=str(exc))
        return
    for warning in result.warnings:
        module.warn(warning)
    module.exit_json(
        changed=result.changed,
        changes=result.changes,
        commands=result.commands,
        session_diff=result.session_diff,
        saved=result.saved,
        version=result.facts.version if result.facts else None,
        # Only a read that nothing followed is the switch as it now is (after a change, "config
        # saved" was read before the save): racfg deploy reads a changed switch again for its
        # baseline. Check mode changes nothing, so there the read is always the switch now.
        racfg_switch_facts=result.facts.to_dict() if result.facts and (module.check_mode or not result.changed)
        else None,
        diff={"before": result.before, "after": result.after,
              "before_header": f"{target.name} running", "after_header": f"{target.name} intended"},
    )


if __name__ == "__main__":
    main()
