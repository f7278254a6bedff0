"""Validate the config.yaml sections that plugins own.

Only the plugins that declare a section present in the file are imported. A top-level key no
enabled plugin claims is a warning, not an error: an existing Hermes home must still load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_kernel.config.controls import KERNEL_SECTIONS
from hermes_kernel.config.settings import Settings
from hermes_kernel.config.validate import unknown_keys, validate_section
from hermes_kernel.plugins.host import PluginHost
from hermes_sdk import ConfigSectionSpec, Kind


@dataclass
class SectionReport:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    validated: list[str] = field(default_factory=list)


def check_plugin_sections(settings: Settings, host: PluginHost) -> SectionReport:
    report = SectionReport()
    document = settings.document
    for key in sorted(k for k in document.data if k not in KERNEL_SECTIONS):
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
                report.warnings.append(
                    f"{where}: unknown key {key!r}: no enabled plugin owns it; it is ignored"
                )
            continue
        spec = provided.spec
        assert isinstance(spec, ConfigSectionSpec)
        instance, problems = validate_section(document, (key,), spec.model, document.data[key])
        report.problems.extend(f"{p} (section of plugin {provided.plugin!r})" for p in problems)
        if instance is not None:
            report.validated.append(str(key))
            report.warnings.extend(unknown_keys(document, (key,), instance))
    return report
