# The executor's agent (agent/mod.rs): runs one command at a time for it,
# each in a process group of its own, and frames what each one wrote.
# A request is a byte count on a line, then that many bytes of shell:
# `run NONCE WORKDIR N NAME... M NAME=VALUE... ARGV...`: ARGV runs in
# WORKDIR with the agent's environment less the N names and with the M
# variables set. The command's stdout and stderr are the agent's own;
# after them come NONCE on stderr and `NONCE STATUS` (or `NONCE nowd`: no
# such working directory) on a line of stdout.
# How the executor ends a command early, by the agent's first argument:
# `lines` (a line `term` or `kill` on stdin while it runs; the end of
# stdin kills it and ends the agent) or `signals` (SIGUSR1 for TERM,
# SIGUSR2 for KILL, sent to the agent; its stdin is read between runs
# only, and the sandbox around it dies with the executor).
ends=$1
set -m
# The agent counts its requests' bytes in the C locale; a command gets the
# LC_ALL the agent was started with (or none), as a shell of its own would.
lc_all_given=${LC_ALL+1} lc_all=${LC_ALL-}
LC_ALL=C
exec 3>&2 2>/dev/null
for n in $(compgen -e); do
  case ${n^^} in *KEY*|*PASSWORD*|*SECRET*|*TOKEN*) unset "$n";; esac
  case $n in DSH_*) unset "$n";; esac
done
pid=0 signalled=0
trap 'signalled=1; ((pid)) && kill -s TERM -- "-$pid"' USR1
trap 'signalled=1; ((pid)) && kill -s KILL -- "-$pid"' USR2
watch() {
  local line
  while IFS= read -r line; do
    case $line in
      term) kill -s TERM -- "-$1";;
      kill) kill -s KILL -- "-$1";;
    esac
  done
  kill -s KILL -- "-$1"
}
run() {
  local nonce=$1 workdir=$2 unsets=$3
  shift 3
  local names=("${@:1:unsets}")
  shift "$unsets"
  local sets=$1
  shift
  local pairs=("${@:1:sets}")
  shift "$sets"
  if ! cd -- "$workdir"; then
    printf '%s' "$nonce" >&3
    printf '%s nowd\n' "$nonce"
    return
  fi
  (
    if [[ $lc_all_given ]]; then LC_ALL=$lc_all; else unset -v LC_ALL; fi
    if ((unsets)); then unset -v "${names[@]}"; fi
    if ((sets)); then export -- "${pairs[@]}"; fi
    exec "$@"
  ) </dev/null 2>&3 3>&- &
  pid=$!
  local watcher=0
  if [[ $ends == lines ]]; then
    watch "$pid" <&0 >/dev/null 3>&- &
    watcher=$!
  fi
  wait "$pid"
  local status=$?
  # A signal's trap cuts `wait` short: wait again for the status.
  while ((signalled)); do
    signalled=0
    wait "$pid"
    status=$?
  done
  while kill -s 0 -- "-$pid"; do sleep 0.01; done
  if ((watcher)); then
    kill -s KILL "$watcher"
    wait "$watcher"
  fi
  pid=0
  printf '%s' "$nonce" >&3
  printf '%s %s\n' "$nonce" "$status"
}
while IFS= read -r length; do
  case $length in ''|*[!0-9]*) continue;; esac
  IFS= read -r -N "$length" request || break
  eval "$request"
done
