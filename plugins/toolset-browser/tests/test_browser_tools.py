"""The browser tools in a real headless Chromium (Debian's), against the loopback site of
``site.py`` (allowed by port through ``web.allow_private_hosts``) and a second loopback
server that nothing may reach. Chromium runs for real: no page, request or process here is
simulated."""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from pathlib import Path
from typing import Any, ClassVar

import hermes_plugin_toolset_browser
import psutil
import pytest
from hermes_plugin_toolset_browser.browser import browsers
from hermes_plugin_toolset_browser.processes import browser_trees, owner_tag, renderer_processes
from hermes_plugin_toolset_browser.settings import BrowserSettings, find_chromium

from hermes_sdk.media import Attachment
from hermes_sdk.tool_calls import call_tool
from hermes_sdk.tooling import ToolContext
from hermes_testkit import ToolsTests

from .site import Secret, Site

# One set of settings for the module: a change of settings starts the browser again.
BROWSER = {"timeout_seconds": 4, "action_timeout_seconds": 3}


def context(
    site: Site, home: Path, session: str = "s1", look: Any = None, **browser: object
) -> ToolContext:
    config = {
        "web": {"allow_private_hosts": [f"127.0.0.1:{site.port}"]},
        "browser": {**BROWSER, **browser},
    }
    return ToolContext(session_id=session, home=str(home), cwd=str(home), config=config, look=look)


def tool(name: str) -> Any:
    (spec,) = [s for s in hermes_plugin_toolset_browser.hermes_tools() if s.name == name]
    return spec


async def acall(name: str, ctx: ToolContext, **arguments: Any) -> str:
    return str(await call_tool(tool(name), arguments, ctx))


def call(name: str, ctx: ToolContext, **arguments: Any) -> str:
    return asyncio.run(acall(name, ctx, **arguments))


def ref(snapshot: str, role: str, name: str) -> str:
    """The ref of the element with ``role`` and accessible ``name`` in a snapshot."""
    found = re.search(rf'{role} "{re.escape(name)}"[^\n]*?\[((?:f\d+)?e\d+)\]', snapshot)
    assert found, f"no {role} {name!r} in:\n{snapshot}"
    return found.group(1)


def renderers() -> list[psutil.Process]:
    """The renderer processes of this test process's browser."""
    return renderer_processes(owner_tag())


def test_a_page_built_by_script_is_in_the_snapshot_and_a_click_changes_it(site, tmp_path):
    ctx = context(site, tmp_path)
    page = call("browser_navigate", ctx, url=site.url("/app"))
    assert page.startswith(f"Opened {site.url('/app')} (HTTP 200)")
    assert "Page: Built by script" in page
    assert "High water at Hamburg: 14:32" in page  # written by a script after the load
    assert "Loading" not in page
    clicked = call("browser_click", ctx, ref=ref(page, "button", "Count"))
    assert clicked.startswith("Clicked [") and 'button "Clicked 1"' in clicked
    again = call("browser_click", ctx, ref="[" + ref(clicked, "button", "Clicked 1") + "]")
    assert 'button "Clicked 2"' in again  # "[e5]" as the snapshot shows it works too
    assert "Clicked 2" in call("browser_snapshot", ctx)


def test_a_login_form_is_filled_by_refs_and_the_next_page_read(site, tmp_path):
    ctx = context(site, tmp_path, session="login")
    form = call("browser_navigate", ctx, url=site.url("/login"))
    call("browser_type", ctx, ref=ref(form, "textbox", "User name"), text="ada")
    signed_in = call(
        "browser_type", ctx, ref=ref(form, "textbox", "Password"), text="hunter2", submit=True
    )
    assert "and pressed Enter" in signed_in
    assert "Page: Account" in signed_in and "Signed in as ada" in signed_in
    # The cookie stays with this session, and with no other.
    assert "Signed in as ada" in call("browser_navigate", ctx, url=site.url("/account"))
    other = call("browser_navigate", context(site, tmp_path, "other"), url=site.url("/account"))
    assert "Not signed in" in other
    back = call("browser_back", ctx)
    assert back.startswith("Went back") and "Page: Sign in" in back  # the same URL again
    assert 'textbox "User name"' in back  # replaced its entry: back is the form


def test_a_pages_script_is_refused_the_metadata_address_and_the_secret_site(
    site, secret: Secret, tmp_path
):
    ctx = context(site, tmp_path, session="exfil")
    page = call("browser_navigate", ctx, url=site.url("/exfil"))
    assert "ARTICLE-BODY" in page  # the page's own content is served
    assert "The guard refused" in page
    assert "refused 169.254.169.254" in page and "cloud metadata" in page
    assert f"(port {secret.port})" in page  # the image, frame, fetch, socket and beacon
    logged = call("browser_console", ctx)
    assert "metadata refused" in logged and "[guard] refused 169.254.169.254" in logged
    assert "metadata said" not in logged
    time.sleep(0.3)
    assert secret.hits == []


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("/to-secret", "refused 127.0.0.1"),
        ("/to-localhost", "refused localhost"),
        ("/to-metadata", "refused 169.254.169.254"),
    ],
)
def test_a_redirect_to_loopback_or_metadata_is_refused(site, secret, tmp_path, path, refused):
    ctx = context(site, tmp_path, session="redirects")
    with pytest.raises(RuntimeError) as error:
        call("browser_navigate", ctx, url=site.url(path))
    assert str(error.value).startswith(refused), error.value
    assert "\n" not in str(error.value)
    assert secret.hits == []
    # The session goes on: the next page opens.
    assert "HOME-PAGE" in call("browser_navigate", ctx, url=site.url("/"))


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("file:///etc/passwd", "file: addresses are refused"),
        ("data:text/html,<h1>hi</h1>", "data: addresses are refused"),
        ("chrome://settings", "chrome: addresses are refused"),
        ("javascript:alert(1)", "javascript: addresses are refused"),
        ("ftp://example.org/", "ftp: addresses are refused"),
        ("  ", "url is empty"),
        ("http://169.254.169.254/latest/meta-data/", "refused 169.254.169.254"),
        ("http://[::1]:8080/", "refused ::1"),
        ("http://no-such-host.invalid/", "refused no-such-host.invalid: the name does not"),
    ],
)
def test_refused_addresses_say_why_in_one_line(site, tmp_path, url, error):
    with pytest.raises((ValueError, RuntimeError)) as raised:
        call("browser_navigate", context(site, tmp_path, session="refusals"), url=url)
    assert error in str(raised.value) and "\n" not in str(raised.value), raised.value


def test_bad_refs_and_keys_say_what_to_give(site, tmp_path):
    ctx = context(site, tmp_path, session="bad-input")
    with pytest.raises(RuntimeError, match="no page is open in this session"):
        call("browser_snapshot", ctx)
    call("browser_navigate", ctx, url=site.url("/app"))
    with pytest.raises(ValueError, match="'the button' is not a ref"):
        call("browser_click", ctx, ref="the button")
    with pytest.raises(RuntimeError) as missing:
        call("browser_click", ctx, ref="e999")
    assert "\n" not in str(missing.value) and "e999" in str(missing.value)
    with pytest.raises(RuntimeError) as key:
        call("browser_press", ctx, key="NoSuchKey")
    assert "NoSuchKey" in str(key.value) and "\n" not in str(key.value)
    with pytest.raises(ValueError, match="give up or down"):
        call("browser_scroll", ctx, direction="sideways")
    assert "High water" in call("browser_snapshot", ctx)  # nothing was lost


def test_a_hanging_page_times_out_alone(site, tmp_path):
    async def both() -> tuple[BaseException | str, str]:
        hanging = acall("browser_navigate", context(site, tmp_path, "hang"), url=site.url("/hang"))
        other = acall("browser_navigate", context(site, tmp_path, "busy"), url=site.url("/slow"))
        results = await asyncio.gather(hanging, other, return_exceptions=True)
        assert isinstance(results[1], str), results[1]
        return results[0], results[1]

    started = time.monotonic()
    hung, served = asyncio.run(both())
    assert isinstance(hung, RuntimeError) and str(hung).startswith("timed out"), hung
    assert "SLOW-PAGE" in served
    assert time.monotonic() - started < 4 + 3  # timeout_seconds, and a margin
    # The session whose page hung goes on.
    assert "HOME-PAGE" in call(
        "browser_navigate", context(site, tmp_path, "hang"), url=site.url("/")
    )


def test_a_crashed_page_is_reported_and_the_next_navigation_recovers(site, tmp_path):
    ctx = context(site, tmp_path, session="crash")
    call("browser_navigate", ctx, url=site.url("/app"))
    for renderer in renderers():
        renderer.kill()
    # Chromium tells the page it crashed once it notices: on a busy machine, later than at
    # once. Until then a snapshot may still come from what the browser held.
    deadline = time.monotonic() + 15
    while True:
        try:
            call("browser_snapshot", ctx)
        except RuntimeError as exc:
            assert "crashed" in str(exc)
            break
        assert time.monotonic() < deadline, "the crash was never reported"
        time.sleep(0.2)
    assert "HOME-PAGE" in call("browser_navigate", ctx, url=site.url("/"))
    assert "[crash] the page's renderer died" in call("browser_console", ctx)


def test_the_console_shows_logs_errors_and_dialogs(site, tmp_path):
    ctx = context(site, tmp_path, session="noisy")
    page = call("browser_navigate", ctx, url=site.url("/noisy"))
    assert "NOISY-PAGE" in page
    logged = call("browser_console", ctx)
    assert "[log] hello from the page" in logged
    assert "[warning] careful now" in logged
    assert "[dialog] alert: a dialog appears (dismissed)" in logged
    assert "something broke" in logged
    assert call("browser_console", ctx) == "nothing was logged since the last look"


def test_a_new_tab_becomes_the_page_and_tabs_are_capped(site, tmp_path):
    ctx = context(site, tmp_path, session="tabs", max_pages=2)
    page = call("browser_navigate", ctx, url=site.url("/popup"))
    link = ref(page, "link", "Open the app in a new tab")
    opened = call("browser_click", ctx, ref=link)
    assert "it opened a new tab" in opened and "Page: Built by script" in opened
    page = call("browser_navigate", ctx, url=site.url("/popup"))
    call("browser_click", ctx, ref=ref(page, "link", "Open the app in a new tab"))  # a third
    assert "a pop-up was closed: at most 2 tabs" in call("browser_console", ctx)


def test_images_are_listed_with_their_size(site, tmp_path):
    ctx = context(site, tmp_path, session="images")
    call("browser_navigate", ctx, url=site.url("/images"))
    listed = call("browser_get_images", ctx)
    assert listed.startswith("2 image(s) on")
    assert f'- {site.url("/pixel.png")} "a red dot" (4x4)' in listed


def test_downloads_are_refused_or_kept_in_the_sessions_folder(site, tmp_path):
    ctx = context(site, tmp_path, session="files")
    page = call("browser_navigate", ctx, url=site.url("/download"))
    call("browser_click", ctx, ref=ref(page, "link", "Get the report"))
    time.sleep(0.3)
    assert "[download] report.txt refused" in call("browser_console", ctx)
    assert not (tmp_path / "browser" / "downloads").exists()

    keeping = context(site, tmp_path, session="files", downloads="keep")
    page = call("browser_navigate", keeping, url=site.url("/download"))
    call("browser_click", keeping, ref=ref(page, "link", "Get the report"))
    kept = tmp_path / "browser" / "downloads" / "files" / "report.txt"
    deadline = time.monotonic() + 5
    while not kept.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kept.read_bytes() == b"REPORT-CONTENT\n"
    assert f"kept at {kept}" in call("browser_console", keeping)


def test_a_snapshot_is_bounded(site, tmp_path):
    # The snapshot of 1,500 rows takes a while on a busy machine: give it the time.
    ctx = context(site, tmp_path, session="long", timeout_seconds=20, action_timeout_seconds=15)
    page = call("browser_navigate", ctx, url=site.url("/long"))
    # browser.snapshot_chars, the page's headlines and the untrusted-data fence (issue 62)
    assert len(page) < 20_000 + 900
    assert "Row 0 of a very long list" in page and "Row 1499" not in page
    assert "browser.snapshot_chars" in page.splitlines()[-2]  # says what was left out
    assert page.splitlines()[-1] == "</untrusted>"


def test_vision_asks_a_model_that_sees_about_a_screenshot(site, tmp_path):
    seen: list[Attachment] = []

    def look(question: str, images: Any) -> str:
        seen.extend(images)
        return f"A red dot, asked {question!r}"

    ctx = context(site, tmp_path, session="vision", look=look)
    call("browser_navigate", ctx, url=site.url("/images"))
    answer = call("browser_vision", ctx, question="what is shown?")
    assert answer.startswith("A red dot, asked 'what is shown?'")
    (image,) = seen
    assert image.kind == "image" and Path(image.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    no_eyes = context(site, tmp_path, session="vision")
    with pytest.raises(Exception, match="no model to look at images"):
        call("browser_vision", no_eyes, question="what is shown?")


def test_no_chromium_is_one_line_that_says_how_to_get_one(site, tmp_path):
    ctx = context(site, tmp_path, session="none", executable="/nonexistent/chromium")
    with pytest.raises(RuntimeError) as error:
        call("browser_navigate", ctx, url=site.url("/"))
    message = str(error.value)
    assert "browser.executable '/nonexistent/chromium' is not an executable file" in message
    assert "\n" not in message
    with pytest.raises(Exception, match=r"browser\.timeout_seconds"):
        call("browser_navigate", context(site, tmp_path, timeout_seconds=-1), url=site.url("/"))


def test_an_idle_session_is_closed_and_then_the_browser(site, tmp_path):
    ctx = context(site, tmp_path, session="idle", idle_seconds=0.5)
    call("browser_navigate", ctx, url=site.url("/"))
    assert len(browser_trees(owner_tag())) == 1
    records = tmp_path / "browser" / "owners"
    deadline = time.monotonic() + 10
    while (browser_trees(owner_tag()) or list(records.glob("*.json"))) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert browser_trees(owner_tag()) == []
    assert not list(records.glob("*.json"))  # the owner record is gone with it
    assert browsers().session_count() == 0
    # And the next call starts a browser again.
    assert "HOME-PAGE" in call("browser_navigate", ctx, url=site.url("/"))
    call("browser_close", ctx)


_CONFORMANCE_SITE = Site(Secret())  # for the examples; lives as long as the test process


class TestBrowserTools(ToolsTests):
    plugin = hermes_plugin_toolset_browser
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    examples: ClassVar = {
        "browser_navigate": (
            {"url": _CONFORMANCE_SITE.url("/login")},
            lambda result: 'textbox "User name" [e4]' in result,
        ),
        "browser_snapshot": ({}, lambda result: 'button "Sign in" [e6]' in result),
        "browser_click": ({"ref": "e4"}, lambda result: result.startswith("Clicked [e4]")),
        "browser_type": (
            {"ref": "e5", "text": "wrong", "submit": True},
            lambda result: "Wrong password" in result,
        ),
        "browser_press": ({"key": "Tab"}, lambda result: result.startswith("Pressed Tab")),
        "browser_scroll": ({"direction": "down"}, lambda result: "Scrolled down" in result),
        "browser_back": ({}, lambda result: "Page: Sign in" in result),
        "browser_get_images": ({}, lambda result: result.startswith("no images")),
        "browser_console": ({}, lambda result: isinstance(result, str)),
        "browser_vision": ({"question": "what is it?"}, lambda result: "A sign-in form" in result),
        "browser_close": ({}, lambda result: result == "closed this session's pages and cookies"),
    }

    def context(self, tmp_path: Path) -> ToolContext:
        return context(
            _CONFORMANCE_SITE, tmp_path, "conformance", look=lambda q, images: "A sign-in form"
        )


def test_attached_to_a_browser_the_user_runs_the_guard_holds_and_it_stays_open(
    site, secret, tmp_path
):
    profile = tmp_path / "profile"
    users = subprocess.Popen(
        [
            find_chromium(BrowserSettings()),
            "--headless",
            "--no-sandbox",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 20
        # Chromium creates the file, then writes it: wait for its first line, not for it.
        while not _first_word(port_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        port = _first_word(port_file)
        ctx = context(site, tmp_path, session="attached", cdp_url=f"http://127.0.0.1:{port}")
        page = call("browser_navigate", ctx, url=site.url("/exfil"))
        assert "ARTICLE-BODY" in page and "refused 169.254.169.254" in page
        assert browser_trees(owner_tag()) == []  # Hermes started no browser of its own
        assert call("browser_close", ctx) == "closed this session's pages and cookies"
        asyncio.run(browsers().thread.run(browsers().close_all()))
        time.sleep(0.3)
        assert users.poll() is None, "the user's browser was closed"
        assert secret.hits == []
    finally:
        users.kill()
        users.wait(10)


def test_a_failed_navigation_is_explained_by_its_own_hosts_refusal(tmp_path):
    from hermes_plugin_toolset_browser.session import BrowserSession

    session = BrowserSession("explain", BrowserSettings(), tmp_path)
    session.begin_action("localhost")
    session._refused("localhost", "refused localhost: loopback", True)
    session._refused("169.254.169.254", "refused 169.254.169.254: link-local", True)
    assert session.refusal_explaining() == "refused localhost: loopback"  # not a page's fetch
    session.begin_action("example.org")  # refused nothing itself: the redirect's target did
    session._refused("10.0.0.5", "refused 10.0.0.5: private", True)
    assert session.refusal_explaining() == "refused 10.0.0.5: private"
    session.begin_action()
    assert session.refusal_explaining() is None  # earlier actions' refusals explain nothing


def _first_word(path: Path) -> str:
    try:
        words = path.read_text().split()
    except FileNotFoundError:
        return ""
    return words[0] if words else ""
