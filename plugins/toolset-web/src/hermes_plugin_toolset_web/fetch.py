"""Fetching through the guard, as every plugin does it (:func:`hermes_commons.ssrf_http.fetch`):
connections go only to addresses the guard judged, redirects are followed by hand so every
hop is judged again, and a body is read only up to its cap."""

from __future__ import annotations

from hermes_commons.ssrf_http import MAX_REDIRECTS, fetch
from hermes_commons.ssrf_http import Fetched as Page

__all__ = ["MAX_REDIRECTS", "Page", "fetch"]
