# The remote sandbox (ssh.rs): runs ARGV on this host inside bubblewrap,
# with what the local sandbox shows, computed here: the workspace root
# read-only, bash, rg and the agent's sleep and env as PATH finds them,
# the shared libraries and the loader `ldd` names for them, the compiled
# locale the locale variables name, the ripgrep config file; an empty
# /tmp, a minimal /dev, the sandbox's own /proc (rg's --sort reads
# /proc/self/exe; the new PID namespace holds only the sandbox's
# processes, with the allowlist's environment), no network; the
# environment's allowlist only.
# Arguments: ROOT DIR N NAME=VALUE... ARGV...: ARGV runs in DIR (under
# ROOT) with the N variables set on top of the allowlist.
root=$1 dir=$2 n=$3
shift 3
pairs=("${@:1:n}")
shift "$n"
if ! b=$(command -v bwrap); then
  printf '\001fs-search-remote-no-bwrap\n' >&2
  exit 127
fi
a=(--unshare-all --die-with-parent --tmpfs /tmp --dev /dev --proc /proc)
declare -A seen
bind() {
  [[ $1 == /* && -z ${seen[$1]} && -e $1 ]] || return 0
  seen[$1]=1
  a+=(--ro-bind "$1" "$1")
}
for p in bash rg sleep env; do
  f=$(command -v "$p") || continue
  [[ $f == /* ]] || continue
  bind "$f"
  while read -r l; do
    case $l in
      *'=> /'*) l=${l#*=> }; bind "${l%% (*}";;
      /*) bind "${l%% (*}";;
    esac
  done < <(ldd "$f" 2>/dev/null)
done
for name in $(compgen -e); do
  case $name in
    LANG|LC_*)
      v=${!name}
      [[ -n $v && $v != */* ]] || continue
      bind "/usr/lib/locale/$v"
      c=${v#*.} l=${v%%.*}
      [[ $v == *.* ]] && c=${c,,} && bind "/usr/lib/locale/$l.${c//-/}";;
  esac
done
bind /usr/lib/locale/locale-archive
if [[ $RIPGREP_CONFIG_PATH == /* && -f $RIPGREP_CONFIG_PATH ]]; then
  bind "$RIPGREP_CONFIG_PATH"
fi
a+=(--ro-bind "$root" "$root" --chdir "$dir")
for pair in "${pairs[@]}"; do
  a+=(--setenv "${pair%%=*}" "${pair#*=}")
done
keep=()
for name in $(compgen -e); do
  case $name in
    PATH|LANG|LANGUAGE|LC_*|RIPGREP_CONFIG_PATH|NO_COLOR|TERM|PAGER|GIT_PAGER)
      keep+=("$name=${!name}");;
  esac
done
exec env -i "${keep[@]}" "$b" "${a[@]}" -- "$@"
