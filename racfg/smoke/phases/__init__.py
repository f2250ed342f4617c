"""smoke's phases, one module each, run by racfg.smoke.phase_table in its order.

Each module, like an ANTA test class, holds one phase whole: its plan (``steps(plan)``, the progress
steps it counts), the commands it runs and its measurement (``measure(run)``, which adds its results to
the run, racfg.smoke.run_state), and its verdicts (``VERDICTS``): pure functions over plain data
(racfg.smoke.measured and the plan) that import no measurement module, so they are tested on tables.
Every verdict's ``data`` keeps the measured series (for plots, JSON and ``--compare``) under
``metrics``.
Modules: ``link_saturation`` (links), ``read_scaling`` (scaling, and the spine tier on a leaf-spine
site), ``storage_throughput`` (storage: fio), ``rdma_bandwidth`` (rdma: perftest), ``user_benchmark``
(benchmark) and ``nccl_allreduce`` (nccl: nccl-tests).
"""
