"""The OpenAI plugin's fakes for tests: Azure OpenAI and Foundry's routes and key check
around the kit's chat-completions server (needs the ``testing`` extra)."""

from hermes_plugin_provider_openai.testing.azure_server import ScriptedAzureOpenAIServer

__all__ = ["ScriptedAzureOpenAIServer"]
