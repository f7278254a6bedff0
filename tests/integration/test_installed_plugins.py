"""Real installed plugins, broken in every way the loader guards against.

Fixtures (tests/fixtures/plugins): good, legacy (no manifest) and the example plugin work;
import-error raises at import, hook-raises raises in its registration hook, sys-exit calls
sys.exit, sleeper hangs past the deadline, shadow provides a name 'good' already provides, and
typo has a misspelt hookimpl. In every case the others work and the process exits 0.
"""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.venv

EXPECTED_FAILURES = {
    "hook-raises": "ValueError: registration exploded (at __init__.py:8)",
    "import-error": "RuntimeError: this plugin is broken at import (at __init__.py:3)",
    "shadow": "provides tool 'echo', already provided by plugin 'good'; disable one of the two",
    "sleeper": "did not finish loading within 2 s (plugins.load_timeout_seconds); it hangs at import",
    "sys-exit": "called sys.exit(3) while loading (at __init__.py:5)",
    "typo": "hookimpl 'hermes_tool' matches no hook spec (did you mean 'hermes_tools'?)",
}
WORKING = {"good", "legacy", "hello"}


def rows(run) -> dict[str, dict]:
    assert run.code == 0, run.err
    return {row["name"]: row for row in json.loads(run.out)}


def test_list_reads_metadata_without_importing_anything(plugin_venv, home):
    run = plugin_venv.hermes(
        "plugins", "list", "--json", home=home, env={"HERMES_TRACE_PLUGINS": "1"}
    )
    listed = rows(run)
    assert set(listed) == set(EXPECTED_FAILURES) | WORKING
    assert "hermes trace:" not in run.err, "listing imported a plugin"
    good = listed["good"]
    assert (good["distribution"], good["version"], good["state"]) == (
        "hermes-plugin-good",
        "0.1.0",
        "enabled",
    )
    assert good["declares"] == [
        "command.hello",
        "config.good",
        "hook.hermes_pre_tool_call",
        "tool.echo",
        "toolset.fixture",
    ]
    assert listed["legacy"]["has_manifest"] is False
    assert listed["shadow"]["problems"] == ["declares tool 'echo', also declared by plugin 'good'"]


def test_verify_isolates_every_failure_and_exits_0(plugin_venv, home):
    listed = rows(plugin_venv.hermes("plugins", "list", "--json", "--verify", home=home))
    for name, reason in EXPECTED_FAILURES.items():
        assert (listed[name]["state"], listed[name]["error"]) == ("failed", reason), name
    for name in WORKING:
        assert listed[name]["state"] == "loaded", listed[name]
    assert listed["good"]["provides"] == listed["good"]["declares"]
    assert listed["legacy"]["provides"] == ["command.legacy"]


def test_the_table_shows_failures_and_plain_list_remembers_them(plugin_venv, home):
    table = plugin_venv.hermes("plugins", "list", "--verify", home=home)
    assert table.code == 0
    assert "    failed: called sys.exit(3) while loading (at __init__.py:5)" in table.out
    assert table.err == "", "the table reports failures; no duplicate warnings on stderr"
    later = plugin_venv.hermes("plugins", "list", home=home)
    assert (
        "last load failed" in later.out
        and "hookimpl 'hermes_tool' matches no hook spec" in later.out
    )


def test_plugin_commands_work_beside_broken_plugins(plugin_venv, home):
    hello = plugin_venv.hermes(
        "hello", "--name", "Ada", home=home, env={"HERMES_TRACE_PLUGINS": "1"}
    )
    assert (hello.code, hello.out) == (0, "hello, Ada, from the good plugin\n")
    loaded = {
        line.split("plugin=")[1].split()[0] for line in hello.err.splitlines() if "<load" in line
    }
    assert loaded == {"good"}, "only the plugin declaring the command is imported"
    # 'legacy' declares nothing, so finding its command imports plugins without a manifest,
    # including one that raises at import: a warning line, and the command still runs.
    legacy = plugin_venv.hermes("legacy", home=home)
    assert (legacy.code, legacy.out) == (0, "legacy plugin works\n")
    assert legacy.err == (
        "hermes: warning: plugin 'import-error' (hermes-plugin-import-error 0.1.0) failed to load: "
        "RuntimeError: this plugin is broken at import (at __init__.py:3); "
        "disable it with: hermes plugins disable import-error\n"
    )
    greet = plugin_venv.hermes("greet", "Ada", home=home)
    assert (greet.code, greet.out) == (0, "Hello, Ada!\n")


def test_help_lists_declared_plugin_commands_without_importing(plugin_venv, home):
    """Each with its line from the help file its wheel ships, and its plugin's name."""
    run = plugin_venv.hermes("--help", home=home, env={"HERMES_TRACE_PLUGINS": "1"})
    assert re.search(r"hello +Say hello \(plugin good\)\n", run.out)
    assert re.search(r"greet +Print a greeting \(plugin hello\)\n", run.out)
    assert "hermes trace:" not in run.err


def test_strict_mode_turns_the_first_failure_into_exit_1(plugin_venv, home):
    run = plugin_venv.hermes("--strict-plugins", "plugins", "list", "--verify", home=home)
    assert run.code == 1
    assert run.err.strip() == (
        "hermes: error: plugin 'hook-raises' (hermes-plugin-hook-raises 0.1.0) failed to load: "
        "ValueError: registration exploded (at __init__.py:8) (strict mode)"
    )
    assert (
        plugin_venv.hermes("plugins", "list", home=home, env={"HERMES_STRICT_PLUGINS": "1"}).code
        == 0
    ), "strict mode only matters when something is loaded"


def test_verbose_mode_shows_the_traceback(plugin_venv, home):
    run = plugin_venv.hermes("-v", "legacy", home=home)
    assert run.code == 0
    assert "Traceback (most recent call last)" in run.err and "broken at import" in run.err


@pytest.mark.parametrize(
    ("env", "args", "expected_enabled"),
    [
        ({"HERMES_LOAD_PLUGINS": "good,hello"}, [], {"good", "hello"}),
        ({"HERMES_LOAD_PLUGINS": ""}, [], set()),
        ({"HERMES_DISABLE_PLUGINS": "*"}, [], set()),
        (
            {"HERMES_DISABLE_PLUGINS": "good,typo"},
            [],
            (set(EXPECTED_FAILURES) | WORKING) - {"good", "typo"},
        ),
        ({}, ["--safe-mode"], set()),
        ({"HERMES_LOAD_PLUGINS": "legacy"}, ["--safe-mode"], {"legacy"}),
    ],
)
def test_environment_controls(plugin_venv, home, env, args, expected_enabled):
    listed = rows(
        plugin_venv.hermes(*args, "plugins", "list", "--json", "--verify", home=home, env=env)
    )
    assert {name for name, row in listed.items() if row["enabled"]} == expected_enabled
    assert all(row["state"] == "disabled" for row in listed.values() if not row["enabled"])


def test_config_controls_and_the_enable_disable_commands(plugin_venv, home):
    for name in EXPECTED_FAILURES:
        assert plugin_venv.hermes("plugins", "disable", name, home=home).code == 0
    doctor = plugin_venv.hermes("doctor", home=home)
    assert doctor.code == 0, doctor.out
    assert "0 errors" in doctor.out
    assert plugin_venv.hermes("plugins", "enable", "typo", home=home).code == 0
    doctor = plugin_venv.hermes("doctor", home=home)
    assert doctor.code == 1
    assert (
        "[FAIL] plugin 'typo' (hermes-plugin-typo 0.1.0) failed to load: hookimpl 'hermes_tool'"
        in doctor.out
    )
    assert "fix: reinstall or upgrade it, or: hermes plugins disable typo" in doctor.out
    # plugins.enabled makes loading opt-in.
    (home / "config.yaml").write_text("plugins:\n  enabled: [hello]\n")
    listed = rows(plugin_venv.hermes("plugins", "list", "--json", home=home))
    assert {name for name, row in listed.items() if row["enabled"]} == {"hello"}
    note = plugin_venv.hermes(
        "plugins", "disable", "hello", home=home, env={"HERMES_LOAD_PLUGINS": "hello"}
    )
    assert "note: still enabled in this shell: named in HERMES_LOAD_PLUGINS" in note.out


def test_plugin_config_sections_are_validated_with_file_and_line(plugin_venv, home):
    (home / "config.yaml").write_text(
        "plugins:\n  disabled: [sleeper]\ngood:\n  greeting: hi\n  repeat: 2\n  extra: 1\n"
        "hello:\n  greeting: [not, a, string]\nunowned: 1\n"
    )
    run = plugin_venv.hermes("config", "validate", home=home, env={"HERMES_TRACE_PLUGINS": "1"})
    assert run.code == 1
    config = home / "config.yaml"
    assert (
        f"error: {config}:8: hello.greeting: expected a valid string (section of plugin 'hello')"
        in run.err
    )
    assert f"warning: {config}:6: unknown key 'good.extra' is ignored" in run.err
    assert (
        f"warning: {config}:9: unknown key 'unowned': no enabled plugin owns it; it is ignored"
        in run.err
    )
    loaded = {
        line.split("plugin=")[1].split()[0] for line in run.err.splitlines() if "<load" in line
    }
    assert loaded == {"good", "hello", "import-error", "legacy"}, (
        "section owners, and plugins without a manifest (for the unowned key)"
    )


def test_info_shows_metadata_and_verification(plugin_venv, home):
    info = plugin_venv.hermes("plugins", "info", "good", home=home)
    assert info.code == 0
    assert info.out.startswith("good: Test fixture plugin: good.\n")
    assert "distribution: hermes-plugin-good 0.1.0" in info.out
    verified = json.loads(
        plugin_venv.hermes("plugins", "info", "typo", "--verify", "--json", home=home).out
    )
    assert verified["state"] == "failed" and "did you mean 'hermes_tools'" in verified["error"]


def test_installing_and_removing_a_plugin_shows_up_at_once(make_venv, fixtures_dir, home):
    """The discovery cache must never hide a change to what is installed."""
    venv = make_venv([fixtures_dir / "good"])
    assert set(rows(venv.hermes("plugins", "list", "--json", home=home))) == {"good"}
    assert list((home / "cache").glob("plugins-*.json")), "the scan was cached"
    venv.pip("install", "-q", str(fixtures_dir / "legacy"))
    assert set(rows(venv.hermes("plugins", "list", "--json", home=home))) == {"good", "legacy"}
    venv.pip("uninstall", "-q", "hermes-plugin-good")
    assert set(rows(venv.hermes("plugins", "list", "--json", home=home))) == {"legacy"}


def test_a_declared_command_whose_plugin_fails_says_why(plugin_venv, home):
    run = plugin_venv.hermes("typo", home=home)
    assert run.code == 1
    assert run.err.splitlines()[-1] == (
        "Error: command 'typo' is declared by plugin 'typo', which failed to load: "
        "hookimpl 'hermes_tool' matches no hook spec (did you mean 'hermes_tools'?)"
    )


def test_config_show_fills_in_plugin_defaults(plugin_venv, home):
    (home / "config.yaml").write_text(
        "plugins:\n  load_timeout_seconds: 2\ngood: [not, a, mapping]\n"
    )
    shown = plugin_venv.hermes(
        "config", "show", home=home, env={"HERMES_LOAD_PLUGINS": "good,hello"}
    )
    assert shown.code == 0
    assert "good:\n- not\n" in shown.out, "an invalid section is shown as written"
    assert "hello:\n  greeting: Hello\n" in shown.out, "an absent section shows its defaults"
    assert "load_timeout_seconds: 2.0" in shown.out
    assert "warning:" in shown.err and "good: expected a valid dictionary" in shown.err


def test_status_puts_failed_plugins_first_on_one_screen(plugin_venv, home):
    assert plugin_venv.hermes("plugins", "list", "--verify", home=home).code == 0
    run = plugin_venv.hermes("status", home=home)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    labels = [line.split(":", 1)[0] for line in lines if not line.startswith(" ")]
    assert labels == [
        "Home",
        "Model",
        "Backend",
        "Plugins",
        "Sessions",
        "Disk",
    ]  # no plugin reports
    summary = next(line for line in lines if line.startswith("Plugins:"))
    assert re.search(r"\d+ installed, \d+ enabled, \d+ disabled, [1-9]\d* failed", summary)
    failed = [line.strip() for line in lines if line.strip().startswith("failed: ")]
    assert lines[lines.index(summary) + 1 : lines.index(summary) + 1 + len(failed)] == [
        " " * 13 + line for line in failed
    ], "each failed plugin is listed right under the summary"
    named = {line.split(":", 2)[1].strip() for line in failed}
    assert set(EXPECTED_FAILURES) <= named
    assert "failed: import-error: RuntimeError: this plugin is broken at import" in run.out
    assert "Sessions:    the store cannot be opened: no plugin provides a store engine" in run.out
    assert len(lines) <= 24, "one screen"
