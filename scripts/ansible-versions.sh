#!/usr/bin/env bash
# racfg on the oldest and the newest ansible-core it supports (pyproject.toml's range): for each, a venv
# of its own (made by scripts/setup.sh, safe to run again: it installs only what is missing), then the
# unit tests marked ``ansible`` (those that drive ansible-core or code that runs under it: see
# tests/conftest.py) and the deploy/validate lab module (tests/deploy/test_ansible_versions_lab.py) in it.
# The venvs are made one after the other (both install this checkout, editable); then both versions run
# at once, each on a lab subnet of its own, their lines prefixed with the version: on two CPUs that took
# 4.5 minutes, venvs made, where one after the other took 5.3 (the lab rounds wait on SSH and boots).
# make test runs this after the main suite (ansible-core 2.19 in .venv); run alone:
#   scripts/ansible-versions.sh [216|221 ...]
# Needs root for the lab. Interpreters: PYTHON_216 and PYTHON_221 override the ones found here
# (python3.11 and python3.13 on PATH, else pyenv's: ansible-core 2.20 and later need Python 3.12+).
set -euo pipefail
cd "$(dirname "$0")/.."

# name -> "python version  ansible-core pin  lab subnet (198.18.N.0/24)"
declare -A VERSIONS=(
  [216]="3.11 ansible-core==2.16.* 87"
  [221]="3.13 ansible-core==2.21.* 88"
)

interpreter() {  # the first python$1 that runs: on PATH, else the newest of pyenv's $1.x
  local want=$1 candidate
  for candidate in "$(command -v "python$want" || true)" \
      $(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")/versions/$want".*/bin/"python$want" 2>/dev/null | sort -rV); do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "ansible-versions: no Python $want found (set PYTHON_<version> to one)" >&2
  return 3
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(216 221)
for name in "${names[@]}"; do
  read -r python_version pin _ <<< "${VERSIONS[$name]:?unknown version $name: use ${!VERSIONS[*]}}"
  override=PYTHON_$name
  python=${!override:-$(interpreter "$python_version")}
  VENV=.venv-ansible$name PYTHON=$python EXTRAS=test ANSIBLE_CORE=$pin scripts/setup.sh
done

check() {  # one version: its ansible-facing unit tests, then its lab round
  local name=$1 venv=.venv-ansible$1 subnet
  read -r _ _ subnet <<< "${VERSIONS[$name]}"
  echo "ansible-versions: $($venv/bin/ansible --version | head -1), $($venv/bin/python --version)"
  # a temporary directory of each run's own: pytest's numbered ones under /tmp are pruned by whichever
  # session starts next, and the other version's would delete this one's while its tests use them
  local temp=${TMPDIR:-/tmp}/racfg-ansible$name
  mkdir -p "$temp"
  $venv/bin/pytest -q -p no:cacheprovider --basetemp="$temp/unit" -n 2 -m "ansible and not lab" tests
  RACFG_VERSIONS_SUBNET=$subnet $venv/bin/pytest -q -p no:cacheprovider --basetemp="$temp/lab" \
    tests/deploy/test_ansible_versions_lab.py
}

declare -A pids=()
for name in "${names[@]}"; do
  ( check "$name" 2>&1 | sed -u "s/^/[$name] /"; exit "${PIPESTATUS[0]}" ) &
  pids[$name]=$!
done
failed=()
for name in "${names[@]}"; do
  wait "${pids[$name]}" || failed+=("$name")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "ansible-versions: failed on ${failed[*]}" >&2
  exit 1
fi
echo "ansible-versions: passed on ${names[*]}"
