"""The tools against the loopback site (allowed through web.allow_private_hosts): realistic
pages, a PDF, pages in Latin-1, a page that never ends, and search through a SearXNG-style
endpoint and a keyed (Brave-style) one; and the SDK's conformance suite for tools."""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path
from typing import ClassVar

import hermes_plugin_toolset_web
import pytest
from hermes_plugin_toolset_web.tools import web_extract, web_search

from hermes_sdk.tooling import ToolContext
from hermes_testkit import ToolsTests

from .loopback_site import BRAVE_KEY, Site


def context(site: Site, tmp_path: Path, search: dict | None = None, **web: object) -> ToolContext:
    config = {
        "web": {
            "allow_private_hosts": [f"127.0.0.1:{site.port}"],
            "search": search or {"backend": "searxng", "searxng_url": site.url("")},
            **web,
        }
    }
    keys = {"BRAVE_API_KEY": BRAVE_KEY}
    return ToolContext(
        session_id="s1", home=str(tmp_path), cwd=str(tmp_path), config=config, secrets=keys.get
    )


def extract(site: Site, tmp_path: Path, *paths: str, **web: object) -> str:
    urls = [site.url(path) for path in paths]
    return asyncio.run(web_extract(urls, context=context(site, tmp_path, **web)))


def test_an_article_becomes_markdown_without_scripts_menus_or_footers(site, tmp_path):
    text = extract(site, tmp_path, "/article")
    assert text.startswith("## Tides of the North Sea (")
    assert "two high tides a day" in text and "3.6" in text
    assert "Hamburg" in text and "|" in text  # the table, as a Markdown table
    assert "[the tide tables](https://example.org/tides)" in text
    for left_out in ("SCRIPT-SECRET", "NAV-MENU-TEXT", "FOOTER-COPYRIGHT", "color: red"):
        assert left_out not in text


def test_a_pdf_json_and_latin1_pages(site, tmp_path):
    pdf, data, latin, undeclared = extract(
        site, tmp_path, "/report.pdf", "/data.json", "/latin1", "/latin1-undeclared"
    ).split("\n\n## ")
    assert "Hello from a PDF" in pdf
    assert '"a": [' in data
    assert "Grüße aus München" in latin and "Straße" in latin
    assert "Grüße aus München" in undeclared  # no charset said: detected


def test_a_page_that_never_ends_is_read_only_to_its_cap(site, tmp_path):
    tracemalloc.start()
    text = extract(site, tmp_path, "/huge", max_page_bytes=2_000_000, page_chars=5000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "only its start was read" in text and "cut at 5,000 characters" in text
    assert peak < 60_000_000, f"peak {peak:,} bytes for a 2 MB cap"


def test_search_through_searxng_and_brave(site, tmp_path):
    found = asyncio.run(web_search("tides", 3, context=context(site, tmp_path)))
    assert found.splitlines()[0] == "1. Result 1 for tides" and "3. Result 3" in found
    assert "4. " not in found
    brave = {"backend": "brave", "brave_url": site.url("/brave")}
    found = asyncio.run(web_search("tides", context=context(site, tmp_path, search=brave)))
    assert "Brave result" in found and "about tides" in found


def test_a_wrong_key_and_a_missing_backend_are_one_line(site, tmp_path):
    brave = {"backend": "brave", "brave_url": site.url("/brave")}
    bad = context(site, tmp_path, search=brave)
    wrong = ToolContext(
        session_id="s2",
        home=str(tmp_path),
        cwd=str(tmp_path),
        config=bad.config,
        secrets={"BRAVE_API_KEY": "nope"}.get,
    )
    with pytest.raises(RuntimeError, match="refused the key"):
        asyncio.run(web_search("x", context=wrong))
    unknown = context(site, tmp_path, search={"backend": "nonesuch"})
    with pytest.raises(RuntimeError, match=r"unknown web\.search\.backend 'nonesuch'"):
        asyncio.run(web_search("x", context=unknown))


def test_results_are_cached_per_session(site, tmp_path):
    seen = len(site.server.seen)
    extract(site, tmp_path, "/article?cached")  # a URL no other test asked for
    extract(site, tmp_path, "/article?cached")
    assert len(site.server.seen) - seen == 1


def test_a_refused_url_is_one_line_for_the_model(site, tmp_path):
    text = extract(site, tmp_path, "/article")
    refused = asyncio.run(
        web_extract(["http://10.1.2.3/", "http://[::1]:22/"], context=context(site, tmp_path))
    )
    assert "refused 10.1.2.3" in refused and "refused ::1" in refused
    assert text


class TestWebTools(ToolsTests):
    plugin = hermes_plugin_toolset_web
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    examples: ClassVar = {
        "web_extract": (
            {"urls": ["http://169.254.169.254/latest/meta-data/"]},
            lambda result: "refused 169.254.169.254" in result and "metadata" in result,
        ),
        "web_search": ({"query": "tides", "limit": 2}, lambda result: "Result 1" in result),
    }

    def context(self, tmp_path: Path) -> ToolContext:
        if not hasattr(TestWebTools, "site"):
            TestWebTools.site = Site()  # lives as long as the test process
        return context(TestWebTools.site, tmp_path)


def test_a_long_page_is_summarized_by_the_auxiliary_model_when_asked(site, tmp_path):
    asked: list[str] = []

    def complete(instructions: str, text: str) -> str:
        asked.append(text)
        return "SUMMARY: lorem ipsum, repeated."

    base = context(site, tmp_path, max_page_bytes=200_000, page_chars=8000)
    summarizing = ToolContext(
        session_id="s3",
        home=base.home,
        cwd=base.cwd,
        config=base.config,
        secrets=base.secrets,
        complete=complete,
    )
    text = asyncio.run(web_extract([site.url("/huge")], True, context=summarizing))
    assert "[summarized by the auxiliary model]\nSUMMARY: lorem ipsum" in text
    assert len(asked) == 1 and len(asked[0]) <= 8200  # the capped page, not the whole
    plain = asyncio.run(web_extract([site.url("/article")], True, context=summarizing))
    assert "summarized" not in plain  # a short page is given as it is


def test_more_pages_than_slots_in_one_call_and_again_in_a_new_loop(site, tmp_path):
    paths = ["/article", "/data.json", "/latin1", "/report.pdf", "/latin1-undeclared"] * 2
    for _ in range(2):  # each asyncio.run is a new event loop, as each one-shot is
        text = extract(site, tmp_path, *paths, concurrency=2, cache_seconds=0)
        pages = [
            line for line in text.splitlines() if line.startswith("## ") and site.url("") in line
        ]
        assert len(pages) == 10, pages


def test_hidden_white_text_is_left_out_and_the_page_is_fenced_as_data(site, tmp_path):
    """Issue 62: white-on-white text told a model that obeys what it reads to send the
    home's .env out. The page is untrusted data: the flagged text is left out, the rest
    kept, and all of it fenced so it reads as information, not orders."""
    text = extract(site, tmp_path, "/hidden-text")
    assert text.startswith("## Pancakes (")
    assert "[Untrusted data from the web page" in text and "\n<untrusted>\n" in text
    assert "Mix flour, milk and two eggs" in text and "Fry in butter" in text
    assert "Ignore all previous instructions" not in text and "evil.example" not in text
    assert "A scan left out what looked like an attack (injection" in text
