"""Skill folders from plugins: each source's factory gives a folder; a broken one is skipped."""

from __future__ import annotations

from types import SimpleNamespace

from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.tooling.environment import skill_dirs

SOURCES = """
from hermes_sdk import SkillSourceSpec, hookimpl

def broken():
    raise OSError("the skills archive is missing")

@hookimpl
def hermes_skill_sources():
    yield SkillSourceSpec(name="k8s", factory=lambda: "/opt/k8s-skills")
    yield SkillSourceSpec(name="broken", factory=broken)
"""


def test_each_source_gives_its_folder_and_a_broken_one_is_skipped(make_plugin, caplog):
    record = make_plugin(
        "k8s-skills", SOURCES, declares=["skill_source.k8s", "skill_source.broken"]
    )
    app = SimpleNamespace(host=PluginHost([record], PluginPolicy()))
    assert skill_dirs(app) == ("/opt/k8s-skills",)
    assert "skill source 'broken' failed: the skills archive is missing" in caplog.text
