"""``import-hermes-agent``: the importer behind ``hermes import hermes-agent``, which brings a
hermes-agent home over (settings, secrets, persona, approved users, sessions, profiles, and
through the plugins that keep them, memory, skills and cron jobs) and only reads it.
Importing this is cheap: the work is in the modules the importer loads."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ImporterSpec, hookimpl

NAME = "hermes-agent"


@hookimpl
def hermes_importers() -> Iterator[ImporterSpec]:
    yield ImporterSpec(
        name=NAME,
        description="a hermes-agent home, default ~/.hermes",
        default_path="~/.hermes",
        factory="hermes_plugin_import_hermes_agent.importer:HermesAgentImporter",
    )
