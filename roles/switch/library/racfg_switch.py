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

from ansible.module_utils.basic import AnsibleModule  # noqa: E402 - Ansible wants the docs first


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
            "facts": {"type": "dict"},
        },
        supports_check_mode=True,
    )
    try:
        from racfg.errors import RacfgError
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
        target = SwitchTarget.from_vars(switch, password, timeout=float(params["timeout"]))
        known = SwitchFacts.from_dict(params["facts"]) if params["facts"] else None
        result = apply_switch(target, intended, check=module.check_mode, save=params["save"], facts=known)
    except SwitchConfigError as exc:
        module.fail_json(msg=str(exc), rejected=exc.rejected, applied=exc.applied, not_applied=exc.not_applied)
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
