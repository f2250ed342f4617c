"""The site lock's side on its lock host: the bash scripts racfg runs there over SSH
(racfg.lock.site_lock), kept apart so that they can be read (and run by the unit tests) as a whole.

Each takes the lock directory and the site's file stem first. ``ACQUIRE`` makes the directory
root's alone if it is missing and refuses it otherwise; ``SHOW`` lists the holders; ``BREAK`` ends
holders' shells. None of them follows a link racfg did not make, or trusts a file's content.
"""

BUSY = 75  # the acquiring shell's exit status when another holds the lock
UNSAFE = 4  # ... when the lock directory or the lock file is not root's alone (stderr says why)
SHELL_NAME = "racfg-lock"  # $0 of the holding shell: how the lock host tells our shells from a reused pid

# Every script: $1 the lock directory, $2 the site file stem. Names shown are sanitised (q): a
# planted name or link target cannot break a line of the listing.
_COMMON = r"""
d=$1; s=$2
q() { printf '%s' "$1" | tr -c 'A-Za-z0-9._/:-' '?'; }
unsafe() { echo "$*" >&2; exit 4; }
check_dir() {
  [ -L "$d" ] && unsafe "$(q "$d") is a symbolic link (to $(q "$(readlink "$d")")), not root's own directory"
  [ -d "$d" ] || unsafe "$(q "$d") is not a directory"
  o=$(stat -c %u "$d"); m=$(stat -c %a "$d")
  [ "$o" = 0 ] || unsafe "$(q "$d") is owned by uid $o, not root"
  [ "$m" = 700 ] || unsafe "$(q "$d") has mode $m, not 700 (root's alone)"
}
"""
# One line per file that claims to hold the lock: "holder<TAB>PID<TAB>ALIVE<TAB>SILENT<TAB>PATH<TAB>JSON"
# for a file racfg wrote, "bad<TAB>PATH<TAB>WHY" for one it did not.
_LIST = r"""
now=$(date +%s)
for f in "$d/$s".*.json; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  p=${f#"$d/$s".}; p=${p%.json}
  case $p in ''|*[!0-9]*) printf 'bad\t%s\tits name is not %s.PID.json\n' "$(q "$f")" "$s"; continue;; esac
  if [ -L "$f" ]; then printf 'bad\t%s\ta symbolic link (to %s)\n' "$f" "$(q "$(readlink "$f")")"; continue; fi
  if [ ! -f "$f" ]; then printf 'bad\t%s\tnot a regular file\n' "$f"; continue; fi
  o=$(stat -c %u "$f")
  if [ "$o" != 0 ]; then printf 'bad\t%s\towned by uid %s, not root\n' "$f" "$o"; continue; fi
  if grep -qa racfg-lock "/proc/$p/cmdline" 2>/dev/null; then a=1; else a=0; fi
  printf 'holder\t%s\t%s\t%s\t%s\t%s\n' "$p" "$a" "$((now - $(stat -c %Y "$f")))" "$f" \
    "$(head -c 4000 "$f" | tr -d '\n')"
done
"""
# $3 flock mode (-x/-s), $4 holder JSON, $5 lease in seconds. Its stdout: "locked PID", "beat" for
# each heartbeat it got (the controller's proof that the lock host still hears it), and at its end
# why it let go ("ended: ..."), which the controller reports when it did not ask for it.
ACQUIRE = _COMMON + r"""
[ -e "$d" ] || [ -L "$d" ] || mkdir -m 700 "$d" 2>/dev/null
check_dir
L="$d/$s.lock"; H="$d/$s.$$.json"
[ -L "$L" ] && unsafe "$(q "$L") is a symbolic link, not racfg's lock file"
[ -e "$L" ] && [ ! -f "$L" ] && unsafe "$(q "$L") is not a regular file"
exec 9>>"$L" || exit 3
if ! flock -n "$3" 9; then
  echo busy
  LIST
  exit 75
fi
rm -f "$H"; printf '%s\n' "$4" > "$H"
trap 'rm -f "$H"' EXIT
trap 'echo "ended: it got SIGTERM or SIGHUP (racfg lock break, or someone on the lock host)"; exit 0' HUP TERM INT
echo "locked $$"
while :; do
  IFS= read -r -t "$5" _; r=$?
  [ "$r" = 0 ] || break
  touch -c "$H"; echo beat
done
[ "$r" -gt 128 ] && echo "ended: no heartbeat from the controller for $5 s (the lease ran out)"
exit 0
""".replace("LIST", _LIST)
SHOW = _COMMON + '[ -e "$d" ] || [ -L "$d" ] || exit 0\ncheck_dir\n' + _LIST
# $3... pids to end: only our own shells (by $0), then their holder files.
BREAK = _COMMON + r"""
[ -e "$d" ] || [ -L "$d" ] || exit 0
check_dir
shift 2
for p in "$@"; do
  if grep -qa racfg-lock "/proc/$p/cmdline" 2>/dev/null; then
    kill -TERM "$p"; sleep 0.5; kill -KILL "$p" 2>/dev/null; echo "ended $p"
  fi
  rm -f "$d/$s.$p.json"
done
"""
