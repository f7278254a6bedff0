"""Azure OpenAI and Azure AI Foundry: chat completions with Azure's key header and routes.

``base_url`` says which of Azure's three routes the endpoint uses:

- the resource (``https://NAME.openai.azure.com``): ``/openai/deployments/{deployment}/
  chat/completions?api-version=V``, the deployment being ``options.deployment`` or the
  model's name (Azure calls a model by the deployment made of it);
- the v1 API (``https://NAME.openai.azure.com/openai/v1``): ``/chat/completions``, no
  version needed;
- Foundry's model inference (``https://NAME.services.ai.azure.com/models``):
  ``/chat/completions?api-version=V``, the model named in the body.

The key goes in ``api-key``, as Azure takes it. A deployment of a reasoning model whose
name does not say so takes ``options.reasoning: true`` (``max_completion_tokens``, no
temperature, ``reasoning_effort``).
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote, urlsplit

from hermes_plugin_provider_openai.client import ChatCompletionsProvider
from hermes_sdk.models import ModelRequest, ProviderSettings

API_VERSION = "2024-10-21"
"""Azure OpenAI's latest generally available data-plane version."""
FOUNDRY_API_VERSION = "2024-05-01-preview"
"""The version Foundry's model inference route takes."""


def _names_deployment_in_path(path: str) -> bool:
    """The resource route (``/openai/deployments/NAME/...``), not v1's or Foundry's."""
    return not path.endswith(("/openai/v1", "/models"))


class AzureOpenAIProvider(ChatCompletionsProvider):
    """A :class:`hermes_sdk.models.ModelProvider` for Azure OpenAI and Foundry."""

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        options = settings.options
        self._version = options.get("api_version")
        self._deployment = options.get("deployment")
        self._path = urlsplit(settings.base_url).path.rstrip("/")

    def prepared(self, request: ModelRequest) -> ModelRequest:
        """The v1 and Foundry routes name the deployment in the body's ``model``."""
        if self._deployment and not _names_deployment_in_path(self._path):
            return replace(request, model=str(self._deployment))
        return request

    def auth_headers(self, settings: ProviderSettings) -> dict[str, str]:
        return {"api-key": settings.api_key} if settings.api_key else {}

    def route_for(self, request: ModelRequest) -> str:
        if self._path.endswith("/openai/v1"):
            version = f"?api-version={self._version}" if self._version else ""
            return f"/chat/completions{version}"
        if self._path.endswith("/models"):
            return f"/chat/completions?api-version={self._version or FOUNDRY_API_VERSION}"
        deployment = quote(str(self._deployment or request.model), safe="")
        version = self._version or API_VERSION
        return f"/openai/deployments/{deployment}/chat/completions?api-version={version}"
