"""Parsers of host tool output for ``racfg validate``: text in, typed facts out.

Each module reads one tool family exactly as real hosts print it (the recordings in
``tests/hostfacts/fixtures`` are copies of real hosts' output, with their sources: excerpts, CRLF line ends,
tabs turned into spaces and interleaved warnings included). The functions are pure so that the
validators, drift and smoke can share them, and the tests can run them on recordings without a host.
A parser that cannot read its input raises :class:`ParseError` instead of returning partial facts:
a check then reports ERROR ("could not be checked") rather than a wrong PASS or FAIL.
"""

from racfg.hostfacts.parse_error import ParseError

__all__ = ["ParseError"]
