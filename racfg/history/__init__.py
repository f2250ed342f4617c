"""``racfg history``: a site's smoke figures over time, read from its run records.

A campaign's report cites the figures the site had when the campaign started; every smoke run
already keeps them (``data["metrics"]`` of its results, racfg.smoke.metrics), so history only reads
the records and never measures or writes one. Modules, one concept each: ``run_figures`` (the smoke
runs of a site and each run's figures, a record that cannot be read skipped with a warning),
``key_figures`` (which figures are key: the site-wide ones, and each per-item family's worst and
median), ``figure_table`` (the figures picked, as rows over the runs, in text, JSON and CSV) and
``history_plot`` (each figure over time, one small panel each, in a PNG).
"""
