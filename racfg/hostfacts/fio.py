"""fio ``--output-format=json`` -> bandwidth and IOPS per job.

fio may print warnings (``fio: ...``, ``note: ...``) before the JSON document; they are skipped.
A job with a non-zero ``error`` is reported as such rather than as a slow drive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from racfg.hostfacts.parse_error import ParseError


@dataclass(frozen=True)
class FioJob:
    name: str
    rw: str
    block_size: str
    read_bytes_per_s: float
    read_iops: float
    write_bytes_per_s: float
    write_iops: float
    runtime_ms: int
    error: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rw": self.rw, "bs": self.block_size,
                "read_bytes_per_s": round(self.read_bytes_per_s),
                "read_iops": round(self.read_iops, 1), "write_bytes_per_s": round(self.write_bytes_per_s),
                "write_iops": round(self.write_iops, 1), "runtime_ms": self.runtime_ms, "error": self.error}


@dataclass(frozen=True)
class FioResult:
    version: str
    jobs: list[FioJob]

    def job(self, name: str) -> FioJob:
        for job in self.jobs:
            if job.name == name:
                return job
        raise ParseError("fio", f"no job {name!r} in the output (jobs: {', '.join(j.name for j in self.jobs)})")


def parse_fio(text: str) -> FioResult:
    text = text.replace("\r\n", "\n")
    start = text.find("{")
    if start < 0:
        raise ParseError("fio", f"no JSON in the output: {text.strip()[:120]!r}")
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise ParseError("fio", f"the JSON output is cut or broken ({exc})") from None
    global_options = doc.get("global options", {})
    jobs = []
    for entry in doc.get("jobs", []):
        options = {**global_options, **entry.get("job options", {})}
        read, write = entry.get("read", {}), entry.get("write", {})
        jobs.append(FioJob(
            name=str(entry.get("jobname", "")), rw=str(options.get("rw", "")), block_size=str(options.get("bs", "")),
            read_bytes_per_s=float(read.get("bw_bytes", read.get("bw", 0) * 1024)),
            read_iops=float(read.get("iops", 0.0)),
            write_bytes_per_s=float(write.get("bw_bytes", write.get("bw", 0) * 1024)),
            write_iops=float(write.get("iops", 0.0)),
            runtime_ms=int(max(read.get("runtime", 0), write.get("runtime", 0))),
            error=int(entry.get("error", 0)),
        ))
    if not jobs:
        raise ParseError("fio", "the output has no jobs")
    return FioResult(str(doc.get("fio version", "")), jobs)
