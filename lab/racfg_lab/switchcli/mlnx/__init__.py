"""The emulated Mellanox switches, Onyx (Ethernet) and MLNX-OS InfiniBand: grammar and show output formats."""
