"""The site's Slurm, as ``racfg gate`` uses it: read its nodes, drain a node whose problem racfg
named (with that problem in the reason), resume a node racfg drained once its problem is gone.

Slurm is asked through racfg.slurm.client (scontrol on the controller over racfg's SSH);
``node_health`` turns a drift run's findings into each node's problems, switch problems onto the
hosts cabled behind them; ``drain_reason`` is racfg's reason text (the prefix that tells racfg's
drains from anyone else's); ``breaker`` caps how much of a partition one run may take out;
``gate_plan`` decides, purely, what to drain, resume, keep and leave alone; ``gate_run`` runs it.
"""
