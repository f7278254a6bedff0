"""``hermes tools`` and ``hermes tools show``, in process, with the workspace's real toolset
plugins installed (the ones the standard bundle ships)."""

from __future__ import annotations

import json

import pytest

from hermes_kernel.cli.main import main


@pytest.fixture
def hermes(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS", raising=False)
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "toolset-terminal,toolset-files")

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr("sys.argv", ["hermes", *args])
        with pytest.raises(SystemExit) as exited:
            main()
        captured = capsys.readouterr()
        return int(exited.value.code or 0), captured.out, captured.err

    run.home = home  # type: ignore[attr-defined]
    return run


def test_every_tool_is_listed_by_toolset_with_its_plugin(hermes):
    code, out, err = hermes("tools")
    assert code == 0, err
    lines = out.splitlines()
    assert "files  (from toolset-files)" in lines
    assert "terminal  (from toolset-terminal)" in lines
    read_file = next(line for line in lines if line.strip().startswith("read_file"))
    assert read_file.startswith("  ") and read_file.endswith("[read-only]")
    assert "not given" not in out  # no agent.toolsets: every tool is given
    assert hermes("tools", "list")[1] == out


def test_tools_outside_the_configured_toolsets_are_marked(hermes):
    (hermes.home / "config.yaml").write_text("agent:\n  toolsets: [files]\n")
    code, out, _ = hermes("tools", "list")
    assert code == 0
    terminal = next(line for line in out.splitlines() if line.startswith("  terminal "))
    assert terminal.endswith("[not given]")
    patch = next(line for line in out.splitlines() if line.startswith("  patch "))
    assert "not given" not in patch
    assert "outside agent.toolsets" in out


def test_show_prints_what_the_model_is_told(hermes):
    code, out, err = hermes("tools", "show", "patch")
    assert code == 0, err
    head, _, schema = out.partition("arguments (JSON schema):\n")
    assert head.startswith("patch  (toolset files, from plugin toolset-files)")
    assert "runs alone, in order" in head and "gets the turn's context" in head
    parsed = json.loads(schema)
    assert parsed["required"] == ["path"] and "old_string" in parsed["properties"]


def test_an_unknown_tool_is_one_line_with_a_suggestion(hermes):
    code, out, err = hermes("tools", "show", "pach")
    assert code == 1 and out == ""
    assert err.strip() == (
        "Error: no tool named 'pach'; did you mean 'patch'? (hermes tools list shows them)"
    )
