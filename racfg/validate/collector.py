"""A pytest plugin that turns each validator test into a ``Result``.

Tests say what they expected and found through the ``verdict`` fixture (kept in the item's
``user_properties``); pytest's outcome decides the status: an assertion -> fail, any other
exception -> error (could not check), a skip -> skip with its reason, setup trouble (host
unreachable) -> error. Nothing else in racfg reads pytest's reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from racfg.errors import CannotRunError, RacfgError
from racfg.results import Result, Status


def check_id(item: pytest.Item) -> tuple[str, str, str]:
    """(target, check id, category) of a validator item: ``dgx03/network/mtu[data0]``."""
    module = getattr(item, "module", None)
    name = module.__name__.rsplit(".", 1)[-1] if module else "checks"
    category = name.removeprefix("test_")
    func = getattr(item, "originalname", item.name).removeprefix("test_")
    target, label = "cluster", ""
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        if hasattr(value, "target"):
            target, label = value.target, value.label
            break
    return target, f"{target}/{category}/{func}" + (f"[{label}]" if label else ""), category


def _message(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    if excinfo.errisinstance(pytest.skip.Exception):
        return str(excinfo.value.msg) if hasattr(excinfo.value, "msg") else str(excinfo.value)
    value = excinfo.value
    text = (value.message if isinstance(value, RacfgError) else str(value)).strip()  # its hint is the fix
    if isinstance(excinfo.value, AssertionError):
        text = text.split("\nassert ")[0].strip()
    first = text.splitlines()[0] if text else ""
    plain = isinstance(excinfo.value, (AssertionError, CannotRunError))  # CannotRunError: worded for people
    return first if plain else f"{excinfo.typename}: {first}"


class ResultCollector:
    """Registered with pytest.main(plugins=[...]); collects Results as tests finish."""

    def __init__(self, on_result: Callable[[Result], None] | None = None) -> None:
        self.results: list[Result] = []
        self.on_result = on_result
        self._started: dict[str, float] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
        outcome = yield
        report = outcome.get_result()
        if call.when == "setup":
            self._started[item.nodeid] = time.monotonic()
        done = (call.when == "call") or (call.when == "setup" and report.outcome != "passed")
        if not done:
            return
        target, cid, category = check_id(item)
        props = dict(item.user_properties)
        if report.outcome == "passed":  # a reading compared with nothing (verdict.info) is info, not a pass
            status, message = Status.INFO if props.get("info") else Status.PASS, str(props.get("message") or "")
        elif report.outcome == "skipped":
            status = Status.SKIP
            message = _message(call.excinfo) if call.excinfo else "skipped"
            if message.startswith("got empty parameter set"):
                return  # nothing of this kind was selected (e.g. --limit dgx01: no switch): not a check
        elif call.when == "setup":
            status, message = Status.ERROR, _message(call.excinfo) if call.excinfo else "setup failed"
        elif call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
            status, message = Status.FAIL, _message(call.excinfo)
        else:
            status, message = Status.ERROR, _message(call.excinfo) if call.excinfo else "error"
        result = Result(
            target=target, check=cid, category=category, status=status, message=message,
            expected=_opt(props.get("expected")), actual=_opt(props.get("actual")),
            fix=props.get("fix") if status is Status.FAIL else _error_fix(call) if status is Status.ERROR else None,
            seconds=round(time.monotonic() - self._started.get(item.nodeid, time.monotonic()), 4),
        )
        self.results.append(result)
        if self.on_result:
            self.on_result(result)


def _error_fix(call: pytest.CallInfo[Any]) -> str | None:
    """An error's fix: the hint of a racfg error worded for people (an unreachable host: what a person
    does, racfg.ssh.reach); any other exception says nothing it could repair."""
    value = call.excinfo.value if call.excinfo else None
    return value.hint if isinstance(value, RacfgError) else None


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
