# Sourced by scripts/dev and scripts/test, which then call `ensure_venv [GROUP…]`: create or reuse
# .venv at the project root with the `local` extra and the named dependency groups installed.
# It installs again only when pyproject.toml or this file changed since the last install, or when
# a group is asked for that is not installed yet: a .venv holding more than asked for (scripts/test
# prepares one with the `dev` group) serves scripts/dev as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

ensure_venv() {
  local python="${PYTHON:-python3}" stamp=.venv/.memvault-installed
  local digest installed="" group missing=""
  digest="$(cat pyproject.toml scripts/_venv.sh | sha256sum | cut -d' ' -f1)"
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  # The stamp: the digest of the last install, then the groups it installed.
  if [ -f "$stamp" ]; then
    installed="$(sed -n 2p "$stamp")"
  fi
  for group in "$@"; do
    case " $installed " in *" $group "*) ;; *) missing="$missing $group" ;; esac
  done
  if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$digest" ] && [ -z "$missing" ]; then
    return 0
  fi
  # What was installed before stays installed, brought up to date with the rest.
  local groups
  groups="$(printf '%s\n' $installed "$@" | sort -u | tr '\n' ' ' | sed 's/ *$//')"
  local args=()
  for group in $groups; do
    args+=(--group "$group")
  done
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[local]" "${args[@]}"
  printf '%s\n%s\n' "$digest" "$groups" > "$stamp"
}
