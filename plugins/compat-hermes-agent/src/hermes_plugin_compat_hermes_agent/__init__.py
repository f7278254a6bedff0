"""hermes-agent's plugins on Hermes.

This module is what the kernel imports; it stays small. The plugin source
(:mod:`finder`) is built only when the kernel asks for a name no Hermes plugin has, or lists
every plugin; each hermes-agent plugin is then loaded by the kernel through
:func:`guest.build`, under its deadlines and, when listed in ``plugins.isolated``, in a
process of its own.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import Finding, HealthContext, PluginSourceSpec, hookimpl
from hermes_sdk.importing import HomeImport, ImportSection


@hookimpl
def hermes_plugin_sources() -> Iterator[PluginSourceSpec]:
    yield PluginSourceSpec(
        name="hermes-agent",
        description="hermes-agent's plugins: entry points and HERMES_HOME/plugins folders",
        factory="hermes_plugin_compat_hermes_agent.finder:HermesAgentPlugins",
    )


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    from hermes_plugin_compat_hermes_agent.doctor import findings

    yield from findings(context)


@hookimpl
def hermes_import_home(request: HomeImport) -> Iterator[ImportSection]:
    from hermes_plugin_compat_hermes_agent.importing import SOURCE_KINDS, import_plugin_folders

    if request.source_kind in SOURCE_KINDS:
        yield import_plugin_folders(request)
