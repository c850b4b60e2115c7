# The remote sandbox (ssh.rs): runs ARGV on this host inside bubblewrap,
# with what the local sandbox shows, computed here: the workspace root
# read-only, bash and rg as PATH finds them, the shared libraries and the
# loader `ldd` names for them, the ripgrep config file; an empty /tmp, a
# minimal /dev, no /proc, no network; the environment's allowlist only.
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
a=(--unshare-all --die-with-parent --tmpfs /tmp --dev /dev)
declare -A seen
bind() {
  [[ $1 == /* && -z ${seen[$1]} && -e $1 ]] || return 0
  seen[$1]=1
  a+=(--ro-bind "$1" "$1")
}
for p in bash rg; do
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
