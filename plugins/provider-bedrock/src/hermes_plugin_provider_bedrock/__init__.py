"""The ``bedrock`` provider: AWS Bedrock's Converse API. Importing this is cheap; httpx and
botocore are imported when the provider is first built."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import ProviderSpec, hookimpl


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="bedrock",
        description="AWS Bedrock Converse API (SigV4 from the AWS credential chain, or an API key)",
        factory="hermes_plugin_provider_bedrock.client:BedrockProvider",
    )
