"""Moved to tests/labsupport.py (test code, not product); this alias stays until every importer has moved."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import labsupport

sys.modules[__name__] = labsupport
