"""Catalog entries, removals and bundles: strict, each problem one line naming the file."""

from __future__ import annotations

import pytest
import yaml
from hermes_plugin_plugin_manager.catalog import CatalogError, load_catalog, read_entry

GOOD = {
    "name": "acme",
    "package": "hermes-plugin-acme",
    "source": {"git": "https://example.org/acme.git", "commit": "a" * 40},
    "kinds": ["tool"],
    "provides": ["tool.acme"],
    "description": "Acme tools.",
    "homepage": "https://example.org/acme",
    "maintainer": "Ada <ada@example.org>",
    "tier": "community",
    "requires_hermes": ">=0.1,<0.2",
    "requires_sdk": ">=0.1,<0.2",
    "environment": ["ACME_TOKEN"],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"source": {"git": "https://x", "commit": "main"}},
            "source.git.commit: String should match pattern '^[0-9a-f]{40}$'",
        ),
        (
            {"source": {"pypi": "hermes-plugin-acme", "version": "latest", "sha256": "0" * 64}},
            "'latest' is not an exact version like 1.2.0",
        ),
        ({"kinds": ["tools"]}, "kinds must be ['tool'] (the kinds of what 'provides' lists)"),
        (
            {"provides": ["tools.acme"], "kinds": ["tool"]},
            "manifest key 'tools.acme' has unknown kind 'tools'",
        ),
        ({"tier": "gold"}, "tier: Input should be 'official' or 'community'"),
        ({"requires_sdk": "0.1+"}, "'0.1+' is not a version range like >=0.1,<0.2"),
        ({"environment": ["sk-live-123"]}, "environment.0: String should match pattern"),
        ({"homepage": "ftp://x"}, "homepage: String should match pattern '^https?://'"),
        ({"surprise": 1}, "surprise: Extra inputs are not permitted"),
    ],
)
def test_a_bad_entry_is_one_line_naming_the_file_and_the_field(tmp_path, change, message):
    path = tmp_path / "entries" / "acme.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({**GOOD, **change}))
    with pytest.raises(CatalogError) as caught:
        read_entry(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_entry_file_is_named_after_its_entry_and_pins_its_source(tmp_path):
    (tmp_path / "entries").mkdir()
    (tmp_path / "entries" / "other.yaml").write_text(yaml.safe_dump(GOOD))
    with pytest.raises(CatalogError, match=r"must be named acme\.yaml"):
        load_catalog(tmp_path)
    (tmp_path / "entries" / "other.yaml").rename(tmp_path / "entries" / "acme.yaml")
    entry = load_catalog(tmp_path).entries["acme"]
    assert (
        entry.requirement() == f"hermes-plugin-acme @ git+https://example.org/acme.git@{'a' * 40}"
    )


def test_removals_and_bundles_are_checked(tmp_path):
    (tmp_path / "entries").mkdir()
    (tmp_path / "entries" / "acme.yaml").write_text(yaml.safe_dump(GOOD))
    (tmp_path / "removed.yaml").write_text(
        yaml.safe_dump(
            [{"name": "hermes-plugin-acme", "versions": ["0.3"], "reason": "leaks keys"}]
        )
    )
    (tmp_path / "bundles.yaml").write_text(
        yaml.safe_dump({"a": {"description": "A", "plugins": ["acme", "ghost"]}})
    )
    with pytest.raises(CatalogError, match="bundle 'a' names 'ghost', which has no entry"):
        load_catalog(tmp_path)
    (tmp_path / "bundles.yaml").write_text(
        yaml.safe_dump({"a": {"description": "A", "includes": ["a"], "plugins": ["acme"]}})
    )
    with pytest.raises(CatalogError, match="bundle 'a' includes itself"):
        load_catalog(tmp_path)
    (tmp_path / "bundles.yaml").unlink()
    catalog = load_catalog(tmp_path)
    assert catalog.removal("acme", "hermes-plugin-acme", "0.3").reason == "leaks keys"
    assert catalog.removal("acme", "hermes-plugin-acme", "0.4") is None
    assert [e.name for e in catalog.search("ACME_TOKEN".lower()[:4])] == ["acme"]
