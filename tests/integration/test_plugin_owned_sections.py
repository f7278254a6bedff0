"""``memory:`` and ``skills:`` belong to the memory-builtin and skills plugins (the kernel has
no model of them): ``hermes config`` validates, shows and sets them through the plugins'
models, and a wrong value is one line naming file, line and key."""

from __future__ import annotations


def test_a_wrong_value_in_a_plugins_section_is_one_line(hermes):
    hermes.config("memory:\n  memory_chars: 50\nskills:\n  index_chars: 900\n")
    checked = hermes("config", "validate")
    assert checked.code == 1
    [line] = [line for line in (checked.out + checked.err).splitlines() if "memory" in line]
    assert line.endswith(
        "config.yaml:2: memory.memory_chars: expected greater than or equal to 200 (got 50) "
        "(section of plugin 'memory-builtin')"
    )


def test_config_show_fills_in_the_plugins_defaults_and_set_checks_them(hermes):
    hermes.config("skills:\n  index_chars: 900\n")
    shown = hermes("config", "show")
    assert shown.code == 0, shown.err
    assert "memory:\n  memory_chars: 2200\n  user_chars: 1375\n" in shown.out
    assert "skills:\n  write_approval: false\n  index_chars: 900\n" in shown.out
    refused = hermes("config", "set", "skills.index_chars", "100")
    assert refused.code == 1 and "skills.index_chars: expected greater than or equal to 500" in (
        refused.err
    )
    assert hermes("config", "set", "memory.write_approval", "true").code == 0
    assert "write_approval: true" in (hermes.home / "config.yaml").read_text()
