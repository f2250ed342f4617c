"""The site's Slurm, asked through its own commands (``client``: scontrol, salloc, srun, scancel on
the controller over racfg's SSH, or where racfg runs). Its own package because three commands use it
and none may depend on another: ``racfg gate`` drains and resumes nodes (racfg.scheduler), smoke holds
the nodes it measures in a job and runs its steps in it (racfg.smoke.launch), and validate reads every
host as one job step per partition (``node_step``). ``placement`` is the rule they share for which
nodes Slurm can run a job on now."""
