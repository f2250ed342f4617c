"""`racfg validate`: pytest-testinfra validators on the hosts, the switch drivers on the switches.

The categories a check is filed under live here, apart from the runner (racfg.validate.validate_run,
which loads pytest and paramiko), so the CLI can name them without paying for those imports on
every other command.
"""

CATEGORIES = ("system", "network", "fabric", "tuning", "packages", "rdma", "storage", "gpu", "weka",
              "consistency", "switches")
