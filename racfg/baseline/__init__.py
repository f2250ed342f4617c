"""The last good state of a site: collected once per run (collect.py) and stored with its history
(store.py). deploy records it after a successful run; drift compares the facts now against it."""
