"""Load a role's Ansible module as a plain Python module for its unit tests, with the racfg
module_utils it imports (roles/common/module_utils) where Ansible would find them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # not half a module for the next import to find
        raise
    return module


def load_module_utils(name: str) -> ModuleType:
    """roles/*/module_utils/<name>.py, as the modules import it (ansible.module_utils.<name>)."""
    path = next((ROOT / "roles").glob(f"*/module_utils/{name}.py"))
    return _load(f"ansible.module_utils.{name}", path)


def load_role_module(role: str, name: str) -> ModuleType:
    """roles/<role>/library/<name>.py, after registering every racfg module_utils file under
    ``ansible.module_utils`` (as Ansible's module builder ships them)."""
    pending = sorted((ROOT / "roles").glob("*/module_utils/*.py"))
    while pending:  # each after the racfg module_utils it imports
        failed = []
        for path in pending:
            try:
                _load(f"ansible.module_utils.{path.stem}", path)
            except ModuleNotFoundError:
                failed.append(path)
        if len(failed) == len(pending):
            raise ImportError(f"module_utils that import each other or something missing: {failed}")
        pending = failed
    return _load(name, ROOT / "roles" / role / "library" / f"{name}.py")
