#!/usr/bin/env bash
# racfg on the oldest and the newest ansible-core it supports (pyproject.toml's range): for each, a venv
# of its own (made by scripts/setup.sh, safe to run again: it installs only what is missing), then the
# unit tests marked ``ansible`` (those that drive ansible-core or code that runs under it: see
# tests/conftest.py) and the deploy/validate lab module (tests/deploy/test_ansible_versions_lab.py) in it.
# make test runs this after the main suite (ansible-core 2.19 in .venv); run alone:
#   scripts/ansible-versions.sh [216|221 ...]
# Needs root for the lab. Interpreters: PYTHON_216 and PYTHON_221 override the ones found here
# (python3.11 and python3.13 on PATH, else pyenv's: ansible-core 2.20 and later need Python 3.12+).
set -euo pipefail
cd "$(dirname "$0")/.."

# name -> "python version  ansible-core pin"
declare -A VERSIONS=(
  [216]="3.11 ansible-core==2.16.*"
  [221]="3.13 ansible-core==2.21.*"
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
  read -r python_version pin <<< "${VERSIONS[$name]:?unknown version $name: use ${!VERSIONS[*]}}"
  override=PYTHON_$name
  python=${!override:-$(interpreter "$python_version")}
  venv=.venv-ansible$name
  VENV=$venv PYTHON=$python EXTRAS=test ANSIBLE_CORE=$pin scripts/setup.sh
  echo "ansible-versions: $($venv/bin/ansible --version | head -1), $($venv/bin/python --version)"
  $venv/bin/pytest -q -p no:cacheprovider -n 2 -m "ansible and not lab" tests
  $venv/bin/pytest -q -p no:cacheprovider tests/deploy/test_ansible_versions_lab.py
done
