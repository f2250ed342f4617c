"""``racfg smoke``: measure link saturation and linear scaling, judge them, name the bottleneck.

Modules, one concept each: ``plan`` (what to measure, its durations and steps, derived from the
inventory and the provider's line rates), ``remote`` (SSH sessions
and bounded remote processes), ``measured`` (what was measured, as plain data; the tools' output
is read by racfg.hostfacts.iperf3, .fio and .perftest), ``tcp`` / ``fio`` / ``perftest`` / ``benchmark``
(measurement runners), ``probes`` (switch counters and host CPU around a step), ``judge``
(verdicts), ``bottleneck``, ``plots``, ``compare``, and ``command`` (the whole run, under the site
lock, with its record).
"""
