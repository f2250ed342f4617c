"""The lab's emulated switch CLI: one SSH server per lab switch speaking Onyx, EOS or MLNX-OS IB
closely enough for netmiko's unmodified drivers. One folder per platform, as racfg.switches.drivers
has one driver per platform: eos/ (grammar, show formats, eAPI) and mlnx/ (Onyx and MLNX-OS IB:
grammar, show formats); the engine, the session server and the data plane are shared, and
platforms.py is the table of the platforms."""
