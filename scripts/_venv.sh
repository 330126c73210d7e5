# Sourced by scripts/dev and scripts/test: create or reuse .venv at the project root and install
# what the given extras need. Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
want="$(cat pyproject.toml scripts/_venv.sh | sha256sum | cut -d' ' -f1) $*"
stamp=.venv/.memvault-installed
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[local]" "$@"
  echo "$want" > "$stamp"
fi
