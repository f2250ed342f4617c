"""The pieces of show output every platform shares: ports in order, uptime, JSON as the CLIs print
it (common.py) and the routing daemon's figures (routing.py). Each platform's own formats are in its
folder (eos/, mlnx/), as racfg.switches.drivers has one driver per platform.
"""
