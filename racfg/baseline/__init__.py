"""The last good state of a site: collected once per run (collect.py) and stored with its history
(store.py). deploy records it after a successful run; drift compares the facts now against it.
Beside it, by the same storage rules, the figures of an accepted clean full smoke (performance.py)."""
