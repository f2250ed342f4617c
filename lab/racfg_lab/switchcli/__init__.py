"""The lab's emulated switch CLI: one SSH server per lab switch speaking Onyx, EOS or MLNX-OS IB
closely enough for netmiko's unmodified drivers (see racfg_lab.switchcli.platforms)."""
