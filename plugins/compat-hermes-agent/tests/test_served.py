"""The served hermes-agent modules: found only where nothing real exists, never a top-level
``agent`` or ``tools`` package, and complete for what they offer. Each case runs in a fresh
interpreter: what is put in sys.modules must not leak between them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def run(code: str, *, path: Path | None = None, home: Path | None = None) -> str:
    env = {"PYTHONPATH": str(path)} if path else {}
    if home is not None:
        env["HERMES_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", INSTALL + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**env, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


INSTALL = "from hermes_plugin_compat_hermes_agent.served import install; install()\n"


def test_plugins_import_what_they_use_and_no_top_level_agent_or_tools_appears(tmp_path):
    out = run(
        """
        import importlib.util, sys
        from hermes_constants import get_hermes_home, get_default_hermes_root
        from hermes_cli.config import cfg_get, load_config
        from hermes_cli.plugins import VALID_HOOKS
        from agent.memory_provider import MemoryProvider
        from tools.registry import tool_error, tool_result
        print(get_hermes_home(), get_default_hermes_root())
        print(tool_error("bad", code=1), tool_result(ok=True))
        print(cfg_get({"a": {"b": None}}, "a", "b", default=5), cfg_get({"a": 1}, "a", "b", default=5))
        print("pre_tool_call" in VALID_HOOKS, "agent" in sys.modules, "tools" in sys.modules)
        try:
            import agent
        except ImportError:
            print("no agent package")
        """,
        home=tmp_path / "profiles" / "work",
    )
    lines = out.splitlines()
    assert lines[0] == f"{tmp_path / 'profiles' / 'work'} {tmp_path}"
    assert lines[1] == '{"error": "bad", "code": 1} {"ok": true}'
    assert lines[2] == "None 5"
    assert lines[3] == "True False False"
    assert lines[4] == "no agent package"


def test_a_real_agent_package_wins_and_is_left_alone(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__init__.py").write_text("MINE = True\n")
    (tmp_path / "hermes_constants.py").write_text("def get_hermes_home():\n    return 'real'\n")
    out = run(
        """
        import sys
        print("agent.memory_provider" in sys.modules)
        import agent, hermes_constants
        print(agent.MINE, hermes_constants.get_hermes_home())
        try:
            from agent.memory_provider import MemoryProvider
        except ImportError:
            print("not served beneath a real agent")
        """,
        path=tmp_path,
    )
    assert out.splitlines() == ["False", "True real", "not served beneath a real agent"]


def test_a_memory_provider_subclass_gets_hermes_agent_defaults():
    out = run(
        """
        from agent.memory_provider import MemoryProvider

        class Mine(MemoryProvider):
            name = "mine"
            def is_available(self): return True
            def initialize(self, session_id, **kwargs): pass
            def get_tool_schemas(self): return []

        m = Mine()
        print(repr(m.prefetch("q")), m.sync_turn("u", "a", session_id="s"), m.backup_paths())
        """
    )
    assert out == "'' None []"


def test_save_config_writes_only_what_changed_and_keeps_comments(tmp_path):
    (tmp_path / "config.yaml").write_text(
        "# my settings\nmodel:\n  default: m  # the one I like\nplugins:\n  disabled: [x]\n"
    )
    run(
        """
        from hermes_cli.config import load_config, save_config
        cfg = load_config()
        cfg.setdefault("plugins", {})["enabled"] = ["noisegate"]
        cfg["plugins"]["disabled"] = []
        cfg.setdefault("memory", {})["provider"] = "local_memory"
        save_config(cfg)
        save_config(load_config())  # nothing changed: nothing written
        """,
        home=tmp_path,
    )
    text = (tmp_path / "config.yaml").read_text()
    assert text.startswith("# my settings\nmodel:\n  default: m  # the one I like\n")
    assert "noisegate" in text and "provider: local_memory" in text
    assert "- x" not in text and "[x]" not in text
    assert oct((tmp_path / "config.yaml").stat().st_mode & 0o777) == "0o644"  # its mode kept


def test_a_real_hermes_cli_is_never_added_to_and_a_folder_in_the_cwd_is_not_a_package(tmp_path):
    (tmp_path / "hermes_cli").mkdir()
    (tmp_path / "hermes_cli" / "__init__.py").write_text("REAL = True\n")
    work = tmp_path / "work"
    (work / "agent").mkdir(parents=True)
    (work / "agent" / "__init__.py").write_text("")
    out = run(
        f"""
        import os, sys
        os.chdir({str(work)!r}); sys.path.insert(0, "")
        from hermes_plugin_compat_hermes_agent.served import install
        install()
        import hermes_cli
        try:
            import hermes_cli.config
        except ImportError:
            print("nothing served beneath a real hermes_cli")
        from agent.memory_provider import MemoryProvider
        print(hermes_cli.REAL, MemoryProvider.__name__)
        """,
        path=tmp_path,
    )
    assert out.splitlines() == ["nothing served beneath a real hermes_cli", "True MemoryProvider"]


def test_a_served_module_is_its_own_and_ours_keeps_its_name():
    out = run(
        """
        import hermes_constants
        from hermes_plugin_compat_hermes_agent.served import constants
        print(hermes_constants.__name__, constants.__name__, constants.__spec__.name)
        print(hermes_constants.get_hermes_home is constants.get_hermes_home)
        """
    )
    assert out.splitlines() == [
        "hermes_constants hermes_plugin_compat_hermes_agent.served.constants "
        "hermes_plugin_compat_hermes_agent.served.constants",
        "True",
    ]


def test_save_config_leaves_what_someone_else_changed_meanwhile(tmp_path):
    (tmp_path / "config.yaml").write_text("model:\n  default: a\n")
    run(
        f"""
        from pathlib import Path
        from hermes_cli.config import load_config, save_config
        cfg = load_config()
        Path({str(tmp_path / "config.yaml")!r}).write_text(
            "model:\\n  default: b\\ngateway:\\n  on: true\\n"
        )
        cfg.setdefault("plugins", {{}})["enabled"] = ["noisegate"]
        save_config(cfg)
        """,
        home=tmp_path,
    )
    text = (tmp_path / "config.yaml").read_text()
    assert "default: b" in text and "gateway:" in text and "foreign:" in text, text
    assert "enabled" not in text
