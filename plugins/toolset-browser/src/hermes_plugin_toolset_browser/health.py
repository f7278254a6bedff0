"""What ``hermes status`` and ``hermes doctor`` say about the browser: which Chromium runs,
and how many browsers this home's Hermes processes have open now. Nothing is started."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

from pydantic import ValidationError

from hermes_plugin_toolset_browser.processes import open_records
from hermes_plugin_toolset_browser.settings import Settings, find_chromium, settings_from
from hermes_sdk import Finding, HealthContext, StatusLine

LABEL = "Browser"


def _settings(context: HealthContext) -> Settings | str:
    try:
        return settings_from(context.config)
    except (ValidationError, ValueError) as exc:
        return str(exc).splitlines()[0]


def status_lines(context: HealthContext) -> Iterator[StatusLine]:
    settings = _settings(context)
    if isinstance(settings, str):
        yield StatusLine(label=LABEL, text=f"{settings} (see: hermes doctor)")
        return
    if settings.browser.cdp_url:
        where = f"attached to {settings.browser.cdp_url}"
    else:
        try:
            where = find_chromium(settings.browser)
        except RuntimeError:
            yield StatusLine(label=LABEL, text="no Chromium found (see: hermes doctor)")
            return
    running, left = open_records(context.home)
    text = f"{where}, {running} open now" if running else f"{where}, none open"
    if left:
        text += f"; {left} left by a killed Hermes (ended at the next start)"
    yield StatusLine(label=LABEL, text=text)


def findings(context: HealthContext) -> Iterator[Finding]:
    settings = _settings(context)
    if isinstance(settings, str):
        yield Finding(level="error", message=f"browser: {settings}", fix="fix config.yaml")
        return
    if importlib.util.find_spec("playwright") is None:
        yield Finding(
            level="error",
            message="browser: the playwright package is not installed",
            fix="hermes plugins install hermes-plugin-toolset-browser",
        )
    if settings.browser.cdp_url:
        yield Finding(level="ok", message=f"browser: attaches to {settings.browser.cdp_url}")
        return
    try:
        found = find_chromium(settings.browser)
    except RuntimeError as exc:
        yield Finding(
            level="error",
            message="browser: no Chromium to run, so the browser tools fail",
            fix=str(exc).split(": ", 1)[-1],
        )
        return
    yield Finding(level="ok", message=f"browser: {found}")
