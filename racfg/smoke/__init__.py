"""``racfg smoke``: measure link saturation and linear scaling, judge them, name the bottleneck.

A smoke run is its phases, run in the order of ``phase_table``; each phase is one module of ``phases``
holding its plan, the commands it runs, its measurement and its pure verdicts (over plain data:
``measured``). Modules, one concept each: ``smoke_run`` (the whole run, under the site lock, with its
record), ``run_state`` (what the phases read and add to), ``smoke_plan`` (what to measure, its durations
and steps, derived from the inventory and the provider's line rates), ``remote`` (SSH sessions and
bounded remote processes), ``tcp`` (the iperf3 load every TCP phase runs), ``batches`` (which links load
together), ``window`` (what the receiving NICs took in), ``probes`` (switch counters and host CPU around
a load), ``measured`` (what was measured, as plain data), ``remeasure`` (which reading decides, measuring
again), ``counter_verdicts`` (switch counters over the whole run), ``bottleneck``, ``nccl_marks`` (what
all-reduce should reach, and pairwise fault isolation), ``metrics`` (figures against references),
``units``, ``plots``, ``compare`` and ``measurement_error``. The tools' output is read by
racfg.hostfacts.iperf3, .fio, .perftest and .nccl_tests.
"""
