"""The plugin's manifest, and what the tool refuses before any model is asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import hermes_plugin_toolset_vision
import pytest
from hermes_plugin_toolset_vision.analyze import vision_analyze

from hermes_sdk.tooling import ToolContext, Unsupported
from hermes_testkit import PluginTests


class TestPlugin(PluginTests):
    plugin = hermes_plugin_toolset_vision
    pyproject = Path(__file__).parents[1] / "pyproject.toml"


def _context(home: Path, look: Any = None) -> ToolContext:
    return ToolContext(session_id="s", home=str(home), cwd=str(home), look=look)


def test_a_file_outside_the_media_cache_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "private.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError, match="is not an image the user sent"):
        asyncio.run(vision_analyze(str(secret), "what is it?", context=_context(tmp_path)))
    escape = tmp_path / "cache" / "media" / ".." / ".." / "private.png"
    with pytest.raises(ValueError, match="is not an image the user sent"):
        asyncio.run(vision_analyze(str(escape), "what is it?", context=_context(tmp_path)))


def test_without_a_model_that_sees_it_says_so(tmp_path: Path) -> None:
    from hermes_sdk.media import MediaCache
    from hermes_testkit.media_files import photo_bytes

    kept = MediaCache.of_home(tmp_path).ingest(photo_bytes((64, 64)), name="p.jpg")
    with pytest.raises(Unsupported, match="no model to look at images"):
        asyncio.run(vision_analyze(kept.path, "what is it?", context=_context(tmp_path)))
