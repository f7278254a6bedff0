"""What the browser tools cost over Playwright itself.

    uv run python tests/bench/browser.py [--runs 40]

1. **Navigate plus snapshot.** ``browser_navigate`` of a local page (served on loopback,
   allowed through ``web.allow_private_hosts``; a script adds to it after the load), which
   opens it through the guard's proxy, waits for the page to settle and returns the compact
   snapshot, against Playwright's own ``page.goto`` plus ``page.aria_snapshot(mode="ai")``
   on the same Chromium with no proxy (the floor), alternating, in the same run. p50 of
   each, and the ratio. The difference is mostly the settle wait: the tool returns once the
   page's requests have been quiet for 0.1 s, so that what scripts fetch is in the snapshot.
2. **A click.** ``browser_click`` on a button that changes the page, against Playwright's
   ``locator.click`` plus a snapshot.
3. **Memory.** The proportional set size (shared pages split among the processes that
   share them) of the whole browser tree, Chromium and its helpers, with eight sessions
   open, each on the page, against one session's.

Run with bytecode compiled (``python -m compileall``), as an install has it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psutil
from hermes_plugin_toolset_browser import tools
from hermes_plugin_toolset_browser.browser import browsers
from hermes_plugin_toolset_browser.processes import browser_trees, owner_tag
from hermes_plugin_toolset_browser.settings import BrowserSettings, find_chromium

from hermes_sdk.tooling import ToolContext

PAGE = (
    "<!doctype html><html><head><title>Bench</title></head><body><h1>Tide tables</h1>"
    + "".join(
        f"<p>Paragraph {n}: the tide at port {n} is high at 14:{n:02d}.</p>" for n in range(60)
    )
    + "<button onclick=\"this.textContent='Pressed'\">Press</button>"
    + "<script>document.body.insertAdjacentHTML('beforeend', '<p>Added by a script</p>')</script>"
    + "</body></html>"
).encode()


class _Page(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _context(url: str, session: str) -> ToolContext:
    port = url.rsplit(":", 1)[1].strip("/")
    config = {"web": {"allow_private_hosts": [f"127.0.0.1:{port}"]}}
    return ToolContext(
        session_id=session, home="/tmp/hermes-browser-bench", cwd="/tmp", config=config
    )


def _tree_pss() -> int:
    total = 0
    for pid in browser_trees(owner_tag()):
        root = psutil.Process(pid)
        for process in [root, *root.children(recursive=True)]:
            try:
                total += process.memory_full_info().pss  # shared pages counted once
            except psutil.Error:
                continue
    return total


async def _floor_page(executable: str):  # type: ignore[no-untyped-def]
    from playwright.async_api import async_playwright

    playwright = await async_playwright().start()
    browser = await playwright.chromium.launch(
        executable_path=executable, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )
    page = await (await browser.new_context()).new_page()
    return playwright, browser, page


async def main(runs: int) -> None:
    server, url = _serve()
    executable = find_chromium(BrowserSettings())
    playwright, browser, page = await _floor_page(executable)
    context = _context(url, "bench")
    ours: list[float] = []
    floor: list[float] = []
    click_ours: list[float] = []
    click_floor: list[float] = []
    for run in range(runs + 3):  # three warm-ups, not counted
        started = time.perf_counter()
        await page.goto(url, wait_until="domcontentloaded")
        await page.aria_snapshot(mode="ai")
        floor_time = time.perf_counter() - started

        started = time.perf_counter()
        await page.get_by_role("button").click()
        await page.aria_snapshot(mode="ai")
        click_floor_time = time.perf_counter() - started

        started = time.perf_counter()
        view = await tools.navigate(url, context=context)
        ours_time = time.perf_counter() - started
        assert "Added by a script" in view, view
        button = view.split('button "Press" [', 1)[1].split("]", 1)[0]

        started = time.perf_counter()
        clicked = await tools.click(button, context=context)
        click_ours_time = time.perf_counter() - started
        assert 'button "Pressed"' in clicked, clicked
        if run >= 3:
            ours.append(ours_time)
            floor.append(floor_time)
            click_ours.append(click_ours_time)
            click_floor.append(click_floor_time)

    one = _tree_pss()
    for number in range(7):
        await tools.navigate(url, context=_context(url, f"bench-{number}"))
    eight = _tree_pss()
    await browser.close()
    await playwright.stop()
    server.shutdown()

    def line(name: str, mine: list[float], base: list[float]) -> None:
        p50, f50 = statistics.median(mine), statistics.median(base)
        print(
            f"{name}: p50 {p50 * 1000:.0f} ms, Playwright alone {f50 * 1000:.0f} ms "
            f"({p50 / f50:.1f}x, +{(p50 - f50) * 1000:.0f} ms); p90 "
            f"{statistics.quantiles(mine, n=10)[-1] * 1000:.0f} ms"
        )

    print(f"{runs} runs each, Chromium {executable}")
    line("navigate + snapshot", ours, floor)
    line("click + snapshot", click_ours, click_floor)
    print(
        f"browser tree memory: one session {one / 2**20:.0f} MiB, eight sessions "
        f"{eight / 2**20:.0f} MiB ({eight / one:.1f}x)"
    )
    await browsers().thread.run(browsers().close_all())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    asyncio.run(main(parser.parse_args().runs))
