"""Change the environment as one transaction: snapshot, install, verify, or roll back.

Verification imports every plugin the change brought, in a fresh interpreter, under the load
deadline, exactly as ``hermes plugins list --verify`` does. If resolution, installation or
verification fails, the environment is put back to its snapshot (packages added are removed,
packages replaced are reinstalled at their old version and source) and config.yaml (and a uv
tool environment's receipt) to its old bytes, and the error says what failed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_plugin_plugin_manager import uv_receipt
from hermes_plugin_plugin_manager.environment import Environment, Installed, InstallerError


@dataclass
class Verified:
    """Plugins a change brought, each with its load result."""

    plugins: dict[str, dict[str, object]] = field(default_factory=dict)

    def failures(self) -> list[str]:
        problems = []
        for name, row in sorted(self.plugins.items()):
            if row.get("state") != "loaded":
                problems.append(f"plugin {name!r}: {row.get('error') or row.get('state')}")
            elif row.get("has_manifest") and row.get("provides") != row.get("declares"):
                problems.append(
                    f"plugin {name!r} registers {row.get('provides')} but its manifest "
                    f"declares {row.get('declares')}"
                )
        return problems


def changed_distributions(before: dict[str, Installed], after: dict[str, Installed]) -> set[str]:
    """Names (as installed) of distributions added or replaced."""
    return {dist.name for key, dist in after.items() if before.get(key) != dist}


# Runs the ``hermes`` console script of the target interpreter by its entry point, so the
# check goes through the same command a user runs, wherever its script was installed.
_RUN_HERMES = (
    "import sys; from importlib.metadata import entry_points; "
    "(hermes,) = entry_points(group='console_scripts', name='hermes'); "
    "sys.argv[0] = 'hermes'; sys.exit(hermes.load()())"
)


def verify(env: Environment, home: Path, distributions: set[str]) -> Verified:
    """Load every plugin of ``distributions`` in a fresh process and report each one."""
    base = [str(env.python), "-c", _RUN_HERMES, "plugins", "list", "--json"]
    environ = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV"}}
    environ["HERMES_HOME"] = str(home)
    listed = _rows(base, environ)
    wanted = {str(row["name"]) for row in listed if row.get("distribution") in distributions}
    if not wanted:
        return Verified()
    # Load only the new plugins, whatever config.yaml or HERMES_DISABLE_PLUGINS say: this
    # checks that they work, not whether the user wants them yet.
    environ.pop("HERMES_DISABLE_PLUGINS", None)
    environ["HERMES_LOAD_PLUGINS"] = ",".join(sorted(wanted))
    rows = _rows([*base, "--verify"], environ)
    return Verified({str(r["name"]): r for r in rows if r["name"] in wanted})


def _rows(command: list[str], environ: dict[str, str]) -> list[dict[str, object]]:
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env=environ, timeout=600
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise InstallerError(f"verification could not run hermes in the environment: {tail}")
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


@dataclass
class Outcome:
    distributions: set[str]
    verified: Verified


def transaction(
    env: Environment,
    home: Path,
    config_path: Path,
    change: Callable[[], None],
    after_install: Callable[[Verified, set[str]], None] | None = None,
    require_plugins: bool = True,
    sources: Sequence[str] = (),
) -> Outcome:
    """Run ``change`` (installer calls) and verify; on any failure restore and re-raise.
    ``sources`` are the installer's extra places to look (``--find-links DIR``), which a
    rollback needs too when the old packages came from there."""
    before = env.snapshot()
    saved = {
        path: path.read_bytes() if path.exists() else None for path in _files(env, config_path)
    }
    try:
        change()
        after = env.snapshot()
        changed = changed_distributions(before, after)
        verified = verify(env, home, changed)
        if require_plugins and not verified.plugins and changed:
            raise InstallerError(
                "it installs no Hermes plugin (no distribution brought a 'hermes.plugins' "
                "entry point)"
            )
        problems = verified.failures()
        if problems:
            raise InstallerError("verification failed: " + "; ".join(problems))
        added = {dist.name for key, dist in after.items() if key not in before}
        if env.uv_tool:  # so that `uv tool upgrade` keeps the plugins
            plugins = {str(row.get("distribution")) for row in verified.plugins.values()}
            uv_receipt.record(
                env.prefix,
                changed=[dist for dist in after.values() if dist.name in plugins],
                added=added,
                removed=[dist.name for key, dist in before.items() if key not in after],
            )
        if after_install is not None:
            after_install(verified, added)
        return Outcome(changed, verified)
    except BaseException as exc:
        left = _roll_back(env, before, saved, sources)
        if left:
            raise InstallerError(
                f"{exc}\nrollback incomplete: these packages differ from before: {', '.join(left)}"
            ) from exc
        if isinstance(exc, InstallerError):
            raise InstallerError(f"{exc}\nrolled back: the environment is as it was") from exc
        raise


def _files(env: Environment, config_path: Path) -> list[Path]:
    """Files a change may rewrite besides the packages."""
    return [config_path, env.prefix / uv_receipt.RECEIPT] if env.uv_tool else [config_path]


def _roll_back(
    env: Environment,
    before: dict[str, Installed],
    saved: dict[Path, bytes | None],
    sources: Sequence[str] = (),
) -> list[str]:
    for path, content in saved.items():
        if content is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(content)
    return env.restore(before, sources)
