"""validate's reads through Slurm (racfg.slurm.node_step): the dispatcher every node receives runs
its own node's script (run here by a real ``sh`` from its gzip'd form, as ``srun`` starts it), the
labelled output of a job step splits back per node (a recording of the lab's ``srun --label``), a
node whose output stopped short goes to SSH with the reason, and validate's probe reads a script's
output the same whichever way it came. The lab proof is tests/validate/test_validate_lab.py."""

from __future__ import annotations

import gzip
import os
import subprocess
from pathlib import Path

from racfg.hostfacts.scontrol import parse_scontrol_nodes
from racfg.slurm.client import Slurm
from racfg.slurm.node_step import (
    DISPATCH,
    NODE_MARK,
    WIDTH,
    NodeOutputs,
    decoded,
    dispatcher,
    run_scripts,
    split_labelled,
)
from racfg.ssh.channels import Completed
from racfg.validate.probe import parse_output, probe_of, script

SLURM = Path(__file__).parents[1] / "recordings" / "slurm"


def run_as(node: str, scripts: dict[str, str]) -> list[str]:
    """The dispatcher as a node runs it: its gzip'd input through ``sh -c DISPATCH``, SLURMD_NODENAME set;
    the lines it prints."""
    data = gzip.compress(dispatcher(scripts).encode())
    done = subprocess.run(["sh", "-c", DISPATCH], input=data, capture_output=True, check=True,
                          env={**os.environ, "SLURMD_NODENAME": node})
    return done.stdout.decode().splitlines()


def output_of(lines: list[str]) -> str:
    assert lines[0].startswith(f"{NODE_MARK} begin ") and lines[-1] == f"{NODE_MARK} end"
    text = decoded(lines[1:-1])
    assert text is not None
    return text


def test_each_node_runs_its_own_script_between_its_markers_in_lines_srun_does_not_cut() -> None:
    scripts = {"dgx01": script({"hostname": "echo I am dgx01", "rc": "exit 3"}, []),
               "stor-01.lab": script({"hostname": "echo 'I am stor-01'; echo ';;' esac",
                                      "long": "head -c 20000 /dev/urandom | od -An -tx1 | tr -d ' \\n'; echo"}, [])}
    lines = run_as("stor-01.lab", scripts)
    assert lines[0] == f"{NODE_MARK} begin stor-01.lab"
    assert max(len(line) for line in lines) <= WIDTH < 1024  # srun --label cuts longer lines
    sections = parse_output(output_of(lines))
    assert sections["hostname"].out == "I am stor-01\n;; esac" and sections["hostname"].rc == 0
    assert len(sections["long"].out) == 40000 and "rc" not in sections
    dgx = parse_output(output_of(run_as("dgx01", scripts)))
    assert dgx["hostname"].out == "I am dgx01" and dgx["rc"].rc == 3


def test_a_node_with_no_script_says_so_and_is_not_read() -> None:
    lines = run_as("dgx09", {"dgx01": script({"a": "echo a"}, [])})
    assert lines == [f"{NODE_MARK} begin dgx09", f"{NODE_MARK} unknown", f"{NODE_MARK} end"]
    assert split_labelled("\n".join(f"0: {line}" for line in lines)) == {}


def test_a_job_steps_labelled_output_splits_per_node_whole_nodes_only() -> None:
    text = (SLURM / "srun-label-two-nodes.txt").read_text()
    outputs = split_labelled(text)
    assert sorted(outputs) == ["dgx01", "dgx02"]
    for node, output in outputs.items():
        sections = parse_output(output)
        assert sections["hostname"].out.strip() == node and sections["hostname"].rc == 0
        assert sections["long"].out == "x" * 3000
    first = next(line for line in text.splitlines() if line.lstrip().startswith("0:") and "begin" in line)
    task0 = first.rsplit(" ", 1)[-1]
    cut = "\n".join(line for line in text.splitlines() if not (line.lstrip().startswith("1:") and "end" in line))
    assert split_labelled(cut) == {task0: outputs[task0]}
    short = "\n".join(line[:-9] if line.startswith("1: H4s") else line for line in text.splitlines())
    assert split_labelled(short) == {task0: outputs[task0]}  # a payload cut short does not decode


def test_a_probe_reads_a_scripts_output_the_same_whichever_way_it_came() -> None:
    commands = {"uname": "echo Linux", "false": "exit 1"}
    out = output_of(run_as("dgx01", {"dgx01": script(commands, [])}))
    probe = probe_of("dgx01", commands, [], out, "read in a Slurm job step", 0.5)
    assert probe.error is None and probe.section("uname").out == "Linux" and probe.get("false").rc == 1
    short = probe_of("dgx01", {**commands, "lsblk": "lsblk"}, [], out, "read in a Slurm job step", 0.5)
    assert short.error == "probe output of dgx01 incomplete (missing lsblk; read in a Slurm job step)"


def test_the_report_line_names_each_step_and_why_a_node_went_over_ssh() -> None:
    nodes = {n.name: n for n in parse_scontrol_nodes((SLURM / "scontrol-show-node-drained.txt").read_text())}
    assert nodes["dgx02"].drained
    reads = NodeOutputs(outputs={"dgx01": "", "stor01": ""}, ssh={"dgx02": "IDLE+DRAIN in Slurm (x)",
                                                                  "stor02": "IDLE+DRAIN in Slurm (x)"},
                        steps={"gpu": ["dgx01"], "storage": ["stor01"]}, seconds={"gpu": 1.24, "storage": 0.8})
    assert reads.describe() == ("host reads: Slurm job steps (srun), one per partition: partition gpu (1 node, "
                                "1.2 s), partition storage (1 node, 0.8 s); SSH on dgx02, stor02: IDLE+DRAIN in "
                                "Slurm (x)")
    assert reads.as_dict()["ssh"] == {"dgx02": "IDLE+DRAIN in Slurm (x)", "stor02": "IDLE+DRAIN in Slurm (x)"}


def test_a_step_where_a_task_failed_keeps_the_nodes_that_answered_and_sends_the_rest_to_ssh() -> None:
    """run_scripts on a Slurm (every node idle) whose gpu step (the recorded two-node step) lost task 1's end
    and exited 1, and whose storage step srun refused: dgx01's read is kept, dgx02 and stor02 go to SSH, each
    with srun's own last word."""
    text = (SLURM / "srun-label-two-nodes.txt").read_text()
    cut = "\n".join(line for line in text.splitlines() if not (line.startswith("1:") and "end" in line))
    refused = "srun: error: Unable to allocate resources: Requested node configuration is not available\n"
    asked = []

    def srun(argv, data, timeout):
        asked.append(argv)
        if "--partition=gpu" in argv:
            return Completed(1, cut, "srun: error: dgx02: task 1: Killed\n")
        return Completed(1, "", refused)

    nodes = {n.name: n for n in parse_scontrol_nodes((SLURM / "scontrol-show-node-idle.txt").read_text())}
    reads = run_scripts(Slurm("test", srun), nodes, {"dgx01": "a", "dgx02": "b", "stor02": "c"}, 60)
    task0 = next(line for line in text.splitlines() if line.startswith("0:") and "begin" in line).rsplit(" ", 1)[-1]
    assert task0 == "dgx01" and set(reads.outputs) == {"dgx01"}
    assert reads.ssh == {
        "dgx02": "its output from the job step in partition gpu did not come back whole (srun exit 1: srun: error: "
                 "dgx02: task 1: Killed)",
        "stor02": "its output from the job step in partition storage did not come back whole (srun exit 1: srun: "
                  "error: Unable to allocate resources: Requested node configuration is not available)"}
    assert sorted(a for argv in asked for a in argv if a.startswith("--nodelist")) == [
        "--nodelist=dgx01,dgx02", "--nodelist=stor02"]
