#!/usr/bin/env bash
# Record, on a real NVIDIA GPU machine, what racfg reads on a DGX, and parse it there with racfg.
#
# What: the exact commands racfg's GPU validators run (validators/test_gpu.py COMMANDS, wrapped by
# racfg's own probe script, racfg.validate.probe.script: nvidia-smi -q -x, nvidia-smi nvlink --status,
# the kernel-log Xid read, dcgmi diag -r 1 or its "not found"), the GPU count smoke reads
# (nvidia-smi -L), nvidia-smi's table, -q, topo -m and --version, and NCCL: nccl-tests built here with
# nvcc against the NCCL of the nvidia-nccl-cu13 Python package, then all_reduce_perf and
# all_gather_perf over the GPUs present. Last, racfg.hostfacts parses what was recorded (parse.txt).
#
# Why: racfg's parsers and checks were written against published copies of other people's output,
# mostly from old drivers. Only a real GPU shows what today's driver prints (driver 580 on an H100),
# and the files this writes become the recordings the unit tests read
# (tests/recordings/h100-device/, provenance in its SOURCES.md).
#
# Usage: OUT=/some/dir scripts/record_gpu_outputs.sh [nccl-tests source dir (default .nccl-tests-src)]
# Run from the repository root. Writes $OUT/recordings.tar.gz (one file per command: .out stdout,
# .err stderr; commands.tsv: name, exit code, seconds, command) and $OUT/record.log. Every step runs
# under `timeout` inside one budget (BUDGET_S, default 300 s); a step that fails or times out is
# recorded with its exit code and the script goes on. It changes nothing on the machine.
set -u

BUDGET_S=${BUDGET_S:-300}
RESERVE_S=25 # kept back for the parse and the tar at the end
OUT=${OUT:?set OUT to the folder the recordings go to}
SRC=${1:-.nccl-tests-src}
R=$OUT/rec
mkdir -p "$R"
LOG=$OUT/record.log
exec > >(tee -a "$LOG") 2>&1
START=$SECONDS
printf 'name\trc\tseconds\tcommand\n' >"$R/commands.tsv"

left() { echo $((BUDGET_S - RESERVE_S - (SECONDS - START))); }

# rec NAME SECONDS COMMAND: run COMMAND in bash under timeout (at most what the budget has left),
# stdout to NAME.out, stderr to NAME.err, one line in commands.tsv. Never fails the script.
rec() {
	local name=$1 want=$2 cmd=$3 t rc t0
	t=$(left)
	((t > want)) && t=$want
	if ((t < 5)); then
		printf '%s\t%s\t0\t%s\n' "$name" "skipped: out of time" "${cmd//$'\n'/ }" >>"$R/commands.tsv"
		echo "== $name: skipped, out of time"
		return 0
	fi
	echo "== $name (timeout ${t}s): $cmd"
	t0=$SECONDS
	timeout -k 5 "$t" bash -c "$cmd" >"$R/$name.out" 2>"$R/$name.err" </dev/null
	rc=$?
	printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "${cmd//$'\n'/ }" >>"$R/commands.tsv"
	echo "   rc $rc in $((SECONDS - t0))s"
	return 0
}

rec env 30 'date -u +%FT%TZ; uname -r; command -v nvidia-smi; python3 --version; command -v nvcc && nvcc --version;
	python3 -m pip show nvidia-nccl-cu13 2>/dev/null | grep -E "^(Name|Version)"; nproc'

# nvidia-smi beside the validators' commands: what an operator reads, and what smoke counts GPUs with.
rec nvidia-smi 30 'nvidia-smi'
rec nvidia-smi_-q 30 'nvidia-smi -q'
rec nvidia-smi_-L 30 'nvidia-smi -L'
rec nvidia-smi_topo_-m 30 'nvidia-smi topo -m'
rec nvidia-smi_--version 30 'nvidia-smi --version'
# The NVIDIA lines of the kernel log, for the reader of an empty Xid read: the driver did log.
rec dmesg_nvrm 30 'dmesg | grep -E "NVRM|nvidia" | head -n 200'

# racfg's own probe script, as validate sends it to a dgx host, and its sections split as racfg does.
# The probe sets a standard PATH; where nvidia-smi lives elsewhere (a container's driver mount), that
# folder is added after it, and probe.sh says so.
rec probe_script 30 'PYTHONPATH=. python3 - <<"EOF"
import importlib.util, os, shutil
from racfg.validate.probe import script
spec = importlib.util.spec_from_file_location("test_gpu", "validators/test_gpu.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
lines = script(module.COMMANDS({"racfg_role": "dgx"}, {}, []), []).splitlines()
smi = shutil.which("nvidia-smi")
if smi and os.path.dirname(smi) not in lines[0]:
    lines.insert(1, f"export PATH=\"$PATH:{os.path.dirname(smi)}\"  # added by record_gpu_outputs.sh")
print("\n".join(lines))
EOF'
rec probe 150 "sh '$R/probe_script.out'"
rec probe_split 30 "PYTHONPATH=. python3 - '$R' <<'EOF'
import sys
from pathlib import Path
from racfg.validate.probe import parse_output
rec = Path(sys.argv[1])
for key, section in parse_output((rec / 'probe.out').read_text(errors='replace')).items():
    (rec / f'racfg-probe_{key}.txt').write_text(section.out + ('\n' if section.out else ''))
    print(key, 'rc', section.rc, 'lines', len(section.out.splitlines()), 'missing', section.missing)
EOF"

# NCCL: nccl-tests against the NCCL of the Python package nvidia-nccl-cu13 (no system NCCL needed).
NCCL_HOME=/tmp/record-nccl-home
BUILD=/tmp/record-nccl-tests-build
rec nccl_locate 30 "set -e
	for d in \$(python3 -c 'import sys; print(\" \".join(p for p in sys.path if p))'); do
		[ -d \"\$d/nvidia\" ] && find \"\$d/nvidia\" -maxdepth 4 \\( -name nccl.h -o -name 'libnccl.so*' \\) 2>/dev/null
	done | sort -u >'$R/nccl_files.txt'
	cat '$R/nccl_files.txt'
	inc=\$(dirname \"\$(grep -m1 '/nccl.h\$' '$R/nccl_files.txt')\")
	lib=\$(grep -m1 'libnccl.so' '$R/nccl_files.txt')
	mkdir -p $NCCL_HOME/lib && ln -sfn \"\$inc\" $NCCL_HOME/include
	ln -sf \"\$lib\" $NCCL_HOME/lib/libnccl.so && ln -sf \"\$lib\" $NCCL_HOME/lib/\$(basename \"\$lib\")
	grep -E '^#define NCCL_(MAJOR|MINOR|PATCH) ' $NCCL_HOME/include/nccl.h"
rec nccl_build 200 "set -e
	nvcc=\$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	cuda=\$(dirname \"\$(dirname \"\$(readlink -f \"\$nvcc\")\")\")
	for d in \"\$cuda/lib64\" \"\$cuda/lib\" \"\$cuda/targets/x86_64-linux/lib\"; do
		[ -e \"\$d/libcudart.so\" ] && culib=\$d && break
	done
	echo \"nvcc \$nvcc CUDA_HOME \$cuda CUDA_LIB \${culib:-?}\"
	cp -r '$SRC' /tmp/record-nccl-tests-src
	make -C /tmp/record-nccl-tests-src/src -j\$(nproc) BUILDDIR=$BUILD MPI=0 NCCL_HOME=$NCCL_HOME \
		CUDA_HOME=\"\$cuda\" CUDA_LIB=\"\${culib:-\$cuda/lib64}\" NVCC=\"\$nvcc\" \
		NVCC_GENCODE='-gencode=arch=compute_90,code=sm_90' build
	ls -l $BUILD/all_reduce_perf $BUILD/all_gather_perf"
export LD_LIBRARY_PATH=$NCCL_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
((GPUS > 0)) || GPUS=1
rec all_reduce_perf 90 "$BUILD/all_reduce_perf -b 8 -e 256M -f 2 -g $GPUS"
rec all_gather_perf 90 "$BUILD/all_gather_perf -b 8 -e 256M -f 2 -g $GPUS"
# The sizes racfg's smoke asks for by default (NcclTests.args): 1 GiB to 8 GiB.
rec all_reduce_perf_racfg-default 60 "$BUILD/all_reduce_perf -b 1G -e 8G -f 2 -g $GPUS"

# racfg.hostfacts on what was just recorded: the facts the GPU checks and smoke judge.
RESERVE_S=5
rec parse 20 "PYTHONPATH=. python3 - '$R' <<'EOF'
import sys
from pathlib import Path
from racfg.hostfacts import ParseError
rec = Path(sys.argv[1])

def show(what, parse, name):
    path = rec / name
    if not path.exists():
        print(f'{what}: {name} not recorded')
        return None
    try:
        value = parse(path.read_text(errors='replace'))
    except ParseError as exc:
        print(f'{what}: ParseError: {exc.reason}')
        return None
    print(f'{what}: {value!r}')
    return value

from racfg.hostfacts.nvidia_smi import parse_nvlink_status, parse_query_xml
from racfg.hostfacts.xid import parse_kernel_log
from racfg.hostfacts.nccl_tests import parse_output
show('nvidia-smi -q -x', parse_query_xml, 'racfg-probe_nvidia_smi.txt')
show('nvlink --status', parse_nvlink_status, 'racfg-probe_nvlink.txt')
show('xid', parse_kernel_log, 'racfg-probe_xid.txt')
for name in ('all_reduce_perf', 'all_gather_perf', 'all_reduce_perf_racfg-default'):
    run = show(name, parse_output, f'{name}.out')
    if run is not None:
        print(f'  {name}: {len(run.rows)} rows, largest {run.largest}, avg busbw {run.avg_busbw}, ranks {run.ranks}')
EOF"

echo "== done in $((SECONDS - START))s"
tar -C "$OUT" -czf "$OUT/recordings.tar.gz" rec && rm -rf "$R"
