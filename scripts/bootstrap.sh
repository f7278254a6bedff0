# Sourced by scripts/test and scripts/hermes: find uv, or install it into a private venv,
# and sync the workspace from uv.lock. Needs only Python 3.11+ with venv and pip.
set -euo pipefail

UV_VERSION="0.13.9"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export UV_PYTHON_DOWNLOADS=never  # use the machine's Python; never fetch one

find_python() {
  for candidate in python3 python3.13 python3.12 python3.11 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "hermes: error: Python 3.11 or newer is required; install it and retry" >&2
  return 1
}

if [ -z "${UV:-}" ]; then
  if command -v uv >/dev/null 2>&1; then
    UV="$(command -v uv)"
  else
    UV="$ROOT/.cache/bootstrap/bin/uv"
    if [ ! -x "$UV" ]; then
      python="$(find_python)"
      echo "hermes: installing uv $UV_VERSION into $ROOT/.cache/bootstrap" >&2
      "$python" -m venv "$ROOT/.cache/bootstrap"
      "$ROOT/.cache/bootstrap/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
    fi
  fi
fi
export UV
if [ -z "${UV_PYTHON:-}" ]; then
  # The interpreter itself, not the name found on PATH: a pyenv shim or a venv's python never
  # matches the environment's own, and uv then deletes and recreates the whole environment
  # (with every plugin the user installed) on each sync.
  UV_PYTHON="$("$(find_python)" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')"
  export UV_PYTHON
fi
# The environment is synced from uv.lock only when the lock, a workspace pyproject.toml, the
# Python or uv changed since the last sync (a stamp inside the environment says what it was
# synced from), and inexactly: a plugin the user added with `hermes plugins install` stays.
# (An exact sync deletes every package the lock does not name.) HERMES_EXACT_SYNC=1 makes
# the sync exact and unconditional: the test command's environment holds the lock, nothing else.
# Offline first: everything the lock names is usually in uv's cache already (no network, no
# revalidation). Online only when something is missing. Every locked package is a wheel, so
# neither way compiles anything.
VENV="${UV_PROJECT_ENVIRONMENT:-$ROOT/.venv}"
sync_inputs() {
  echo "$UV_PYTHON $("$UV" --version)"
  cat "$ROOT/uv.lock" "$ROOT/pyproject.toml" "$ROOT"/sdk/pyproject.toml "$ROOT"/commons/pyproject.toml "$ROOT"/testkit/pyproject.toml \
    "$ROOT"/kernel/pyproject.toml "$ROOT"/plugins/*/pyproject.toml
}
wanted="$(sync_inputs | cksum)"
stamp="$VENV/.hermes-synced-from"
# The launcher's environment has the `launcher` group (uv for `hermes plugins install`,
# pytest for plugin authors) but not the project's own development tools (ruff, mypy, the
# protocol clients and MCP servers the suite talks to: the test command's environment has
# them), a good part of a first download.
if [ "${HERMES_EXACT_SYNC:-0}" = 1 ]; then
  exactness=(--exact)
else
  exactness=(--inexact --no-dev --group launcher)
fi
if [ "${HERMES_EXACT_SYNC:-0}" = 1 ] || [ ! -x "$VENV/bin/python" ] || [ ! -f "$stamp" ] ||
   [ "$(cat "$stamp")" != "$wanted" ]; then
  if ! "$UV" sync --quiet --locked --all-packages --offline "${exactness[@]}" \
       --project "$ROOT" 2>/dev/null; then
    echo "hermes: setting up the environment (the first time downloads ~300 MB: under a minute)" >&2
    "$UV" sync --quiet --locked --all-packages "${exactness[@]}" --project "$ROOT"
  fi
  echo "$wanted" >"$stamp"
fi
