#!/usr/bin/env bash
# Install what racfg needs on a Debian 12 machine: Debian packages (root) and a Python venv.
# Safe to run again: it installs only what is missing and re-installs the package only when
# pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(debootstrap systemd-container iproute2 openssh-client iputils-ping iperf3 kmod lldpd ethtool frr frr-pythontools)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 3
  fi
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# VENV, PYTHON, EXTRAS and ANSIBLE_CORE make the other venvs CI tests with (scripts/ansible-versions.sh):
# e.g. VENV=.venv-ansible221 PYTHON=python3.13 EXTRAS=test ANSIBLE_CORE='ansible-core==2.21.*'.
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS:-dev}
ANSIBLE_CORE=${ANSIBLE_CORE:-}
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# The stamp holds what was installed: a changed pin or extra installs again, as a newer pyproject.toml
# (racfg's or the lab's) does. Every venv gets both distributions, editable: racfg (the product) and
# racfg-lab (lab/: the virtual lab that `racfg lab`, `racfg demo` and the lab tests use).
stamp=$VENV/.racfg-installed
wanted="extras=$EXTRAS ansible-core=${ANSIBLE_CORE:-pyproject} lab=editable"
installed=$(cat "$stamp" 2>/dev/null || echo none)
[ -n "$installed" ] || installed="extras=dev ansible-core=pyproject"  # an empty stamp: written before stamps said what
if [ "$installed" != "$wanted" ] || [ pyproject.toml -nt "$stamp" ] || [ lab/pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing racfg, racfg-lab and their dependencies into $VENV ($wanted)"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e ".[$EXTRAS]" -e ./lab ${ANSIBLE_CORE:+"$ANSIBLE_CORE"}
  echo "$wanted" > "$stamp"
fi

# Bytecode for racfg's own modules and the lab's, as a regular (non-editable) pip install writes it:
# the editable install has none, and where PYTHONDONTWRITEBYTECODE is set (this machine, CI) every racfg command
# compiled its modules again at start (0.14 of the 0.5 CPU-s of `racfg check inventory/lab.yaml`).
# Python still checks each file against its source, and this compiles only what changed.
"$VENV/bin/python" -m compileall -q racfg lab/racfg_lab >/dev/null
