"""The site's Slurm, asked through its own commands (``client``: scontrol, salloc, scancel on the
controller over racfg's SSH, or where racfg runs). Its own package because two commands use it and
neither may depend on the other: ``racfg gate`` drains and resumes nodes (racfg.scheduler), and
smoke holds the nodes it measures in a job and runs its steps in it (racfg.smoke.launch)."""
