"""The evaluated prompt kept in HERMES_HOME/cache/embedded: a new process (here: a freshly
loaded model) starts from the stored prefix; damage and the size bound cost a miss, never an
error. Runs the real bundled model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hermes_plugin_provider_local import engine
from hermes_plugin_provider_local.engine import EmbeddedProvider
from hermes_plugin_provider_local.models import DEFAULT_MODEL

from hermes_sdk.models import ChatMessage, ModelRequest, ProviderSettings

SYSTEM = ChatMessage(
    "system",
    "You are Hermes, a helpful assistant. " + "Answer briefly and plainly. " * 30,
)


@pytest.fixture(autouse=True)
def fresh_models():
    engine._close_all()  # each test loads its own model: as a new process would
    yield
    engine._close_all()


def ask(home: Path, text: str, **options) -> str:
    settings = ProviderSettings(base_url="embedded:", home=str(home), options=options)
    request = ModelRequest(
        model=DEFAULT_MODEL, messages=(SYSTEM, ChatMessage("user", text)), max_tokens=8
    )

    async def run() -> str:
        provider = EmbeddedProvider(settings)
        try:
            return (await provider.complete(request)).content
        finally:
            await provider.aclose()

    return asyncio.run(run())


def cache_of() -> object:
    (model,) = engine._loaded.values()
    return model.cache


def entries(home: Path) -> list[Path]:
    return sorted((home / "cache" / "embedded").glob("*/prefix.slot"))


def test_a_new_model_starts_from_the_stored_prefix(tmp_path):
    ask(tmp_path, "Say hi.")
    assert len(entries(tmp_path)) == 1 and cache_of().stored == 1
    engine._close_all()
    assert ask(tmp_path, "Say bye.")  # a different question after the same prefix
    cache = cache_of()
    assert cache.hits >= 1, "the second model loaded the stored prefix"
    assert cache.stored == 0, "an entry already covers most of it: nothing new is written"


def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path):
    ask(tmp_path, "Say hi.")
    (entry,) = entries(tmp_path)
    entry.write_bytes(b"\x01\x02\x03")  # not a llama.cpp slot state
    engine._close_all()
    assert ask(tmp_path, "Say hi.")
    assert cache_of().hits == 0
    assert [p.read_bytes() != b"\x01\x02\x03" for p in entries(tmp_path)] == [True]


def test_the_size_bound_holds_and_zero_turns_it_off(tmp_path):
    ask(tmp_path / "tiny", "Say hi.", prefix_cache_mb=0)
    assert not (tmp_path / "tiny" / "cache").exists()
    engine._close_all()
    ask(tmp_path / "bounded", "Say hi.", prefix_cache_mb=1)  # a state is several MB
    assert cache_of().stored == 1, "it was written, then dropped to keep the bound"
    assert entries(tmp_path / "bounded") == []
