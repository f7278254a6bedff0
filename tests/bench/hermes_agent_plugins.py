"""How many real hermes-agent plugins from PyPI load and register cleanly on Hermes.

For each package the plugin survey judged mappable, a virtual environment of its own gets the
kernel, the SDK, the compat-hermes-agent plugin and the plugins they lean on (memory, skills,
terminal), then the package from PyPI with its dependencies (as ``pip install`` would). Its
plugins are found as hermes-agent finds them: its ``hermes_agent.plugins`` entry points, or,
for a package that installs a plugin folder with its own installer, the folder it ships
(``plugin.yaml`` beside an ``__init__.py``) linked into ``HERMES_HOME/plugins``. Each is then
enabled (``hermes plugins enable NAME``) and loaded (``hermes plugins info NAME --verify``).

It prints one row per package (loaded, failed and why, or not installable here), the count
that load and register cleanly, the one-line notes about registrations Hermes does not run
yet, and the load time of each against a floor measured in the same run: a minimal folder
plugin that registers one tool.

    uv run python tests/bench/hermes_agent_plugins.py [--only NAME ...] [--work DIR]

Needs the network (PyPI); not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from conftest import build_venv, uv_command  # noqa: E402  (shared with the integration tests)

SURVEY = [
    "agentmetrics-hermes",
    "hermead",
    "hermes-axiorank",
    "hermes-brain-memory",
    "hermes-hy-memory",
    "hermes-itsuki",
    "hermes-jobctl",
    "hermes-okf",
    "hermes-scope-recall",
    "hermes-semantic-memory",
    "hermes-tweet",
    "hermes-yandex-calendar",
    "knos-hermes",
    "memento-lifecycle",
    "recall-memory-hermes",
    "remnic-hermes",
    "sibyl-memory-hermes",
    "stock-analysis-plugin",
    "tabularius",
    "uncomment-hermes-plugin",
    "verbatim-memory",
    "aarvion-guard-hermes",
    "acp-hermes",
    "agentguard-hermes-plugin",
    "agento11y-hermes",
    "atbash-hermes-plugin",
    "blackwall-hermes-plugin",
    "hermes-intaris",
    "multi-user-rbac",
    "opik-hermes",
    "preloop-hermes-plugin",
    "rtk-hermes",
    "vaibot-hermes-circuitbreaker",
    "vinctor-hermes-plugin",
]
INSTALLERS = {
    # A package whose README installs the plugin folder with a command of its own.
    "agentguard-hermes-plugin": ["agentguard-hermes", "install", "--hermes-dir", "{home}"],
    "sibyl-memory-hermes": ["sibyl-memory-hermes", "install-plugin"],
}
NOT_ON_PYPI = {
    # Their READMEs install the plugin from git with hermes-agent's own installer
    # (hermes plugins install OWNER/REPO); the PyPI package is a library.
    "hermes-jobctl": "hermes plugins install mikewei/hermes-plugin-jobctl",
    "recall-memory-hermes": "hermes plugins install Jnocode/recall-memory-hermes",
    # Needs the Remnic daemon and its own CLI (remnic connectors install hermes).
    "remnic-hermes": "remnic connectors install hermes",
}
OURS = ["store-sqlite", "chat", "providers", "memory-builtin", "skills", "toolset-terminal"]
FLOOR_PLUGIN = """
def register(ctx):
    ctx.register_tool("floor_echo", "floor", {"name": "floor_echo", "parameters": {}},
                      lambda args, **kwargs: "echo")
"""

FIND_PLUGINS = """
import json, sys
import yaml
from importlib import metadata


def manifest_name(path):
    try:
        return (yaml.safe_load(path.read_text()) or {}).get("name")
    except yaml.YAMLError:
        return None

dist = metadata.distribution(sys.argv[1])
groups = ("hermes_agent.plugins", "hermes_agent.memory_providers")
entry = [e.name for e in dist.entry_points if e.group in groups]
folders = {}
for file in dist.files or []:
    if file.name in ("plugin.yaml", "plugin.yml"):
        folder = file.locate().parent
        if (folder / "__init__.py").is_file():
            folders[str(manifest_name(file.locate()) or folder.name)] = str(folder)
print(json.dumps({"entry": entry, "folders": folders}))
"""


@dataclass
class Plugin:
    name: str
    state: str = "?"
    error: str = ""
    provides: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load_ms: float | None = None


@dataclass
class Package:
    name: str
    installed: bool = False
    why: str = ""
    plugins: list[Plugin] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return bool(self.plugins) and all(p.state == "loaded" for p in self.plugins)


def hermes(venv: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "HOME": str(home.parent),
        "HERMES_HOME": str(home),
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.run(
        [str(venv / "bin" / "hermes"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def load(venv: Path, home: Path, name: str) -> Plugin:
    plugin = Plugin(name)
    enabled = hermes(venv, home, "plugins", "enable", name)
    if enabled.returncode != 0:
        plugin.state, plugin.error = "not found", enabled.stderr.strip()[-200:]
        return plugin
    info = hermes(venv, home, "plugins", "info", name, "--verify", "--json")
    try:
        row = json.loads(info.stdout)
    except json.JSONDecodeError:
        plugin.state, plugin.error = "crashed", (info.stderr.strip() or info.stdout)[-300:]
        return plugin
    plugin.state = row["state"]
    plugin.error = row.get("error") or ""
    plugin.provides = row.get("provides") or []
    plugin.load_ms = row.get("load_ms")
    marker = f"hermes-agent plugin {name!r}: "
    plugin.notes = [line.split(marker, 1)[1] for line in info.stderr.splitlines() if marker in line]
    return plugin


def survey(package: str, work: Path, base: list[Path]) -> Package:
    found = Package(package)
    venv = work / "venvs" / package
    home = work / "homes" / package / ".hermes"
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(home.parent, ignore_errors=True)
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("model:\n  default: bench\n")
    try:
        build_venv(venv, base)
    except subprocess.CalledProcessError as exc:
        found.why = f"base install failed: {exc}"
        return found
    installed = subprocess.run(
        [uv_command(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), package],
        capture_output=True,
        text=True,
        check=False,
    )
    if installed.returncode != 0:
        found.why = "pip install failed: " + installed.stderr.strip().splitlines()[-1][:200]
        return found
    found.installed = True
    if package in NOT_ON_PYPI:
        found.why = f"installed as a plugin another way: {NOT_ON_PYPI[package]}"
        return found
    if package in INSTALLERS:
        command = [part.format(home=home) for part in INSTALLERS[package]]
        command[0] = str(venv / "bin" / command[0])
        env = {"HOME": str(home.parent), "HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"}
        ran = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if ran.returncode != 0:
            found.why = "its installer failed: " + (ran.stderr or ran.stdout).strip()[-200:]
            return found
        folders = sorted(p.name for p in (home / "plugins").iterdir() if p.is_dir())
        found.plugins = [load(venv, home, name) for name in folders]
        return found
    dist = package
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", FIND_PLUGINS, dist],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        found.why = "could not read its metadata: " + listed.stderr.strip()[-200:]
        return found
    places = json.loads(listed.stdout)
    names = list(places["entry"])
    if not names:  # a package without entry points ships a folder its installer copies
        for name, folder in places["folders"].items():
            link = home / "plugins" / name
            link.parent.mkdir(exist_ok=True)
            link.symlink_to(folder, target_is_directory=True)
            names.append(name)
    if not names:
        found.why = (
            "no hermes_agent entry point and no plugin folder (plugin.yaml beside an "
            "__init__.py) in the package: its own installer writes the plugin"
        )
        return found
    found.plugins = [load(venv, home, name) for name in names]
    return found


def floor_ms(work: Path, base: list[Path]) -> float | None:
    venv = work / "venvs" / "_floor"
    home = work / "homes" / "_floor" / ".hermes"
    shutil.rmtree(home.parent, ignore_errors=True)
    (home / "plugins" / "floor").mkdir(parents=True)
    (home / "plugins" / "floor" / "__init__.py").write_text(FLOOR_PLUGIN)
    (home / "config.yaml").write_text("model:\n  default: bench\n")
    if not (venv / "bin" / "hermes").exists():
        build_venv(venv, base)
    return load(venv, home, "floor").load_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="survey only these packages")
    parser.add_argument("--work", type=Path, default=None, help="keep venvs and homes here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="hermes-agent-plugins-"))
    base = [REPO / "plugins" / name for name in [*OURS, "compat-hermes-agent"]]
    floor = floor_ms(work, base)
    results = [survey(package, work, base) for package in (args.only or SURVEY)]
    print(f"floor: a one-tool folder plugin loads in {floor} ms\n")
    for result in results:
        if not result.plugins:
            print(f"- {result.name}: {'not loaded: ' + result.why}")
            continue
        for plugin in result.plugins:
            ratio = (
                f", {plugin.load_ms / floor:.1f}x floor"
                if plugin.load_ms is not None and floor
                else ""
            )
            line = f"- {result.name} / {plugin.name}: {plugin.state}"
            line += f" ({plugin.load_ms} ms{ratio})" if plugin.load_ms is not None else ""
            line += f": {plugin.error}" if plugin.error else ""
            print(line)
            if plugin.provides:
                print(f"    provides: {', '.join(plugin.provides)}")
            for note in plugin.notes:
                print(f"    note: {note}")
    clean = sum(result.clean for result in results)
    elsewhere = sum(result.name in NOT_ON_PYPI for result in results)
    print(
        f"\n{clean} of {len(results)} packages load and register cleanly "
        f"(ratio {clean / len(results):.2f}); {elsewhere} are installed as plugins another "
        f"way (not counted); {clean} of {len(results) - elsewhere} installable from PyPI "
        f"(ratio {clean / max(1, len(results) - elsewhere):.2f})"
    )
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.pop("VIRTUAL_ENV", None)
    raise SystemExit(main())
