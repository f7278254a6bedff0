"""The Gemini plugin's fake for tests: a scripted Gemini API and Vertex AI server (needs the
``testing`` extra, which brings the test kit)."""

from hermes_plugin_provider_gemini.testing.gemini_server import (
    ScriptedGeminiServer,
    contents_problem,
)

__all__ = ["ScriptedGeminiServer", "contents_problem"]
