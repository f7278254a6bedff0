"""What plugins provide for other plugins reaches every context as ``provided``: the kernel
indexes those specs and hands them over, and never reads what they mean."""

from __future__ import annotations

import pickle

from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_sdk import Kind, PromptContext, SkillSourceSpec
from hermes_sdk.provided import SHARED_KINDS, ProvidedSpecs

SOURCES = """
from hermes_sdk import SkillSourceSpec, ToolSpec, hookimpl

@hookimpl
def hermes_skill_sources():
    yield SkillSourceSpec(name="k8s", factory=lambda: "/opt/k8s-skills")

@hookimpl
def hermes_tools():
    yield ToolSpec(name="kubectl_get", handler=lambda: "")
"""


def test_shared_kinds_are_loaded_up_front_and_other_kinds_lazily(make_plugin):
    record = make_plugin("k8s-skills", SOURCES, declares=["skill_source.k8s", "tool.kubectl_get"])
    host = PluginHost([record], PluginPolicy())
    assert Kind.SKILL_SOURCE in SHARED_KINDS
    shared = host.shared()
    assert host.outcomes["k8s-skills"].ok  # loaded when the snapshot was taken, not later
    (spec,) = shared.of(Kind.SKILL_SOURCE)
    assert isinstance(spec, SkillSourceSpec) and spec.factory() == "/opt/k8s-skills"
    assert shared.of(Kind.TOOL) == ()  # only the shared kinds are in a context's snapshot

    lazy = PluginHost([record], PluginPolicy()).shared(lazily=True)
    assert [s.name for s in lazy.of(Kind.TOOL)] == ["kubectl_get"]


def test_what_is_provided_crosses_to_an_isolated_process_empty():
    source = SkillSourceSpec(name="k", factory=lambda: "/x")
    provided = ProvidedSpecs({Kind.SKILL_SOURCE: [source]})
    context = PromptContext(session_id="s", source="cli", home="/h", provided=provided)
    assert context.provided.of(Kind.SKILL_SOURCE) == (source,)
    # An isolated plugin's prompt hook gets the context pickled: the lambda could not
    # cross, so what others provide stays behind and the rest of the context goes.
    copied = pickle.loads(pickle.dumps(context))
    assert copied.home == "/h" and copied.provided.of(Kind.SKILL_SOURCE) == ()
