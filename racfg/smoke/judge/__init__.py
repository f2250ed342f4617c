"""Smoke's verdicts: pure functions from measured figures (and the plan) to ``racfg.results.Result``.

One module per concern: ``readings`` (which reading decides, re-measuring), ``links`` (saturation and
outliers), ``scaling`` (E(n), the knee), ``counters`` (switch port counters), ``figures`` (storage, RDMA
and benchmark figures against references), ``phases`` (a phase that could not run, said so). Every
verdict's ``data`` keeps the measured series (for plots, JSON and ``--compare``) under ``metrics``.
"""
