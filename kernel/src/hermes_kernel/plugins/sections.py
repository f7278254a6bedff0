"""Validate the config.yaml sections that plugins own.

Only the plugins that declare a section present in the file are imported. A top-level key no
enabled plugin claims is a warning, not an error: an existing Hermes home must still load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_commons.sections import closest
from hermes_kernel.config.controls import KERNEL_SECTIONS
from hermes_kernel.config.settings import Settings
from hermes_kernel.config.validate import lenient_section, validate_section
from hermes_kernel.config.yaml_source import YamlDocument
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.records import PluginRecord
from hermes_sdk import ConfigSectionSpec, Kind


@dataclass
class SectionReport:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)  # validated, defaults filled in


def unknown_top_level(document: YamlDocument, records: Sequence[PluginRecord]) -> list[str]:
    """One line per top-level key of config.yaml that neither the kernel nor any installed
    plugin (enabled or not) declares, with a guess: said at every start, since the key is
    ignored (``modle:`` for ``model:``). From metadata: nothing is imported."""
    owned = {name for record in records for kind, name in record.declares if kind is Kind.CONFIG}
    known = sorted({*KERNEL_SECTIONS, *owned})
    lines = []
    for key in document.data:
        if key in KERNEL_SECTIONS or key in owned:
            continue
        meant = closest(str(key), known)
        guess = f" (did you mean {meant!r}?)" if meant else ""
        lines.append(
            f"{document.where((key,))}: unknown key {key!r}{guess} is ignored; "
            "fix it, or see: hermes doctor"
        )
    return lines


def check_plugin_sections(
    settings: Settings, host: PluginHost, include_absent: bool = False
) -> SectionReport:
    """Validate each plugin section in config.yaml; with ``include_absent``, also report the
    defaults of sections that enabled plugins declare but the file leaves out."""
    report = SectionReport()
    document = settings.document
    keys = {k for k in document.data if k not in KERNEL_SECTIONS}
    if include_absent:
        keys |= set(host.declared(Kind.CONFIG))
    for key in sorted(keys, key=str):
        if key not in document.data:
            provided = host.require(Kind.CONFIG, key)
            if provided is not None:
                assert isinstance(provided.spec, ConfigSectionSpec)
                instance, _ = validate_section(document, (key,), provided.spec.model_class(), None)
                if instance is not None:
                    report.values[key] = instance.model_dump(mode="json")
            continue
        where = document.where((key,))
        provided = host.require(Kind.CONFIG, str(key))
        if provided is None:
            owners = [r.name for r in host.records if (Kind.CONFIG, key) in r.declares]
            if owners:
                report.warnings.append(
                    f"{where}: section {key!r} belongs to plugin {owners[0]!r}, which is not "
                    f"loaded ({host.decision(owners[0]).reason}); it is not checked"
                )
            else:
                known = sorted({*KERNEL_SECTIONS, *map(str, host.declared(Kind.CONFIG))})
                meant = closest(str(key), known)
                guess = f" (did you mean {meant!r}?)" if meant else ""
                report.warnings.append(
                    f"{where}: unknown key {key!r}{guess}: no enabled plugin owns it; it is ignored"
                )
            continue
        spec = provided.spec
        assert isinstance(spec, ConfigSectionSpec)
        instance, problems, unknown, _ = lenient_section(
            document, (key,), spec.model_class(), document.data[key]
        )
        report.problems.extend(f"{p} (section of plugin {provided.plugin!r})" for p in problems)
        if instance is not None:
            report.values[str(key)] = instance.model_dump(mode="json")
        report.warnings.extend(
            f"{found.finding(document)}{_guess(found.meant)}" for found in unknown
        )
    return report


def _guess(meant: str | None) -> str:
    return f" (did you mean {meant!r}?)" if meant else ""
