"""hermes-sdk: the contract every Hermes plugin is written against.

A plugin is a module of ``@hookimpl`` functions named after the hooks in
:mod:`hermes_sdk.hookspecs`; registration hooks yield the spec types exported here.
"""

from hermes_sdk._markers import PROJECT_NAME, hookimpl, hookspec, new_plugin_manager
from hermes_sdk._version import __version__
from hermes_sdk.events import (
    LLMCall,
    LLMResult,
    PromptContext,
    PromptSection,
    SessionInfo,
    SlashContext,
    ToolCall,
    ToolResult,
)
from hermes_sdk.provided import ProvidedSpecs
from hermes_sdk.specs import (
    BackendSpec,
    CommandSpec,
    ConfigSectionSpec,
    ContextEngineSpec,
    FactorySpec,
    Kind,
    MemoryProviderSpec,
    ModelPrice,
    PlatformSpec,
    PriceTableSpec,
    ProviderSpec,
    ReviewSpec,
    ReviewTrigger,
    RungSpec,
    ServiceSpec,
    SkillSourceSpec,
    SlashCommandSpec,
    Spec,
    ToolsetSpec,
    ToolSourceSpec,
    ToolSpec,
    manifest_key,
    parse_manifest_key,
)

__all__ = [
    "PROJECT_NAME",
    "BackendSpec",
    "CommandSpec",
    "ConfigSectionSpec",
    "ContextEngineSpec",
    "FactorySpec",
    "Kind",
    "LLMCall",
    "LLMResult",
    "MemoryProviderSpec",
    "ModelPrice",
    "PlatformSpec",
    "PriceTableSpec",
    "PromptContext",
    "PromptSection",
    "ProvidedSpecs",
    "ProviderSpec",
    "ReviewSpec",
    "ReviewTrigger",
    "RungSpec",
    "ServiceSpec",
    "SessionInfo",
    "SkillSourceSpec",
    "SlashCommandSpec",
    "SlashContext",
    "Spec",
    "ToolCall",
    "ToolResult",
    "ToolSourceSpec",
    "ToolSpec",
    "ToolsetSpec",
    "__version__",
    "hookimpl",
    "hookspec",
    "manifest_key",
    "new_plugin_manager",
    "parse_manifest_key",
]
