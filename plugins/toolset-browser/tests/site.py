"""Web sites of the tests' own on loopback. ``Site`` is the one the browser may open (the
tests allow its port through ``web.allow_private_hosts``): pages built by scripts, a login
form, pages that reach for the metadata address and for the secret site, redirects, a page
that never answers, images, a noisy page, a pop-up and a download. ``Secret`` is a second
loopback server the guard must keep the browser from: it counts every request it gets."""

from __future__ import annotations

import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

APP = """<!doctype html><html><head><title>Built by script</title></head><body>
<div id="root">Loading…</div>
<script>
setTimeout(() => {
  document.getElementById("root").innerHTML =
    "<h1>Tide tables</h1><p>High water at Hamburg: 14:32</p>" +
    "<button onclick=\\"this.textContent='Clicked ' + (++window.n || (window.n = 1))\\">" +
    "Count</button>";
}, 50);
</script></body></html>"""

LOGIN = """<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1>
<form method="post" action="/login">
<label for="user">User name</label> <input id="user" name="user">
<label for="password">Password</label> <input id="password" name="password" type="password">
<button type="submit">Sign in</button>
</form></body></html>"""

EXFIL = """<!doctype html><html><head><title>Harmless looking</title></head><body>
<h1>A harmless looking article</h1><p>Its own text is served: ARTICLE-BODY.</p>
<img src="{secret}/img.png" alt="tracker"><iframe src="{secret}/frame"></iframe>
<script>
fetch("http://169.254.169.254/latest/meta-data/").then(r => r.text())
  .then(t => console.log("metadata said " + t), e => console.log("metadata refused"));
fetch("{secret}/xhr").catch(() => console.log("secret refused"));
try {{ new WebSocket("{secret_ws}/socket"); }} catch (e) {{}}
navigator.sendBeacon("{secret}/beacon", "x");
</script></body></html>"""

NOISY = """<!doctype html><html><head><title>Noisy</title></head><body><p>NOISY-PAGE</p>
<script>
console.log("hello from the page");
console.warn("careful now");
setTimeout(() => alert("a dialog appears"), 10);
setTimeout(() => { throw new Error("something broke"); }, 20);
</script></body></html>"""

POPUP = """<!doctype html><html><head><title>Pop-ups</title></head><body>
<a href="/app" target="_blank">Open the app in a new tab</a></body></html>"""

IMAGES = """<!doctype html><html><head><title>Gallery</title></head><body>
<img src="/pixel.png" alt="a red dot"><img src="/pixel.png?2" alt=""><p>GALLERY</p>
</body></html>"""

DOWNLOAD = """<!doctype html><html><head><title>Files</title></head><body>
<a href="/report.txt">Get the report</a></body></html>"""


def _png() -> bytes:
    """A 4x4 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack("!I", len(data)) + body + struct.pack("!I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 4 for _ in range(4))
    header = struct.pack("!IIBBBBB", 4, 4, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class _Served:
    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.owner = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Secret(_Served):
    """Must never be reached: ``hits`` lists every path it was asked for."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        super().__init__(_SecretHandler)


class _SecretHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.owner.hits.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"SECRET-CONTENT")

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


class Site(_Served):
    def __init__(self, secret: Secret) -> None:
        self.secret = secret
        self.stop_hanging = threading.Event()
        super().__init__(_SiteHandler)

    def close(self) -> None:
        self.stop_hanging.set()
        super().close()


class _SiteHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def site(self) -> Site:
        return self.server.owner  # type: ignore[attr-defined, no-any-return]

    def _send(
        self, body: bytes | str, kind: str = "text/html; charset=utf-8", **headers: str
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, location: str, status: int = 302) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _page(self, title: str, text: str) -> str:
        return f"<!doctype html><html><head><title>{title}</title></head><body>{text}</body></html>"

    def do_GET(self) -> None:
        path, _, _query = self.path.partition("?")
        secret = self.site.secret
        if path == "/":
            self._send(self._page("Home", '<h1>Home</h1><p>HOME-PAGE</p><a href="/app">App</a>'))
        elif path == "/app":
            self._send(APP)
        elif path == "/login":
            self._send(LOGIN)
        elif path == "/account":
            cookie = self.headers.get("Cookie") or ""
            who = dict(p.strip().split("=", 1) for p in cookie.split(";") if "=" in p).get("who")
            text = f"Signed in as {who}" if who else "Not signed in"
            self._send(self._page("Account", f"<h1>Account</h1><p>{text}</p>"))
        elif path == "/exfil":
            secret_ws = secret.url("").replace("http://", "ws://")
            self._send(EXFIL.format(secret=secret.url(""), secret_ws=secret_ws))
        elif path == "/to-secret":
            self._redirect(secret.url("/landing"))
        elif path == "/to-localhost":
            self._redirect(f"http://localhost:{secret.port}/landing")
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data/")
        elif path == "/hang":
            self.site.stop_hanging.wait(120)  # answers only when the site closes
        elif path == "/slow":
            time.sleep(0.5)
            self._send(self._page("Slow", "<p>SLOW-PAGE</p>"))
        elif path == "/noisy":
            self._send(NOISY)
        elif path == "/popup":
            self._send(POPUP)
        elif path == "/images":
            self._send(IMAGES)
        elif path == "/pixel.png":
            self._send(PNG, "image/png")
        elif path == "/download":
            self._send(DOWNLOAD)
        elif path == "/report.txt":
            self._send(
                b"REPORT-CONTENT\n",
                "text/plain",
                Content_Disposition='attachment; filename="report.txt"',
            )
        elif path == "/long":
            # About 70 KB of snapshot: more only slows a busy machine down.
            rows = "".join(f"<li>Row {n} of a very long list</li>" for n in range(1500))
            self._send(self._page("Long", f"<ul>{rows}</ul>"))
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if self.path == "/login":
            user = form.get("user", [""])[0]
            password = form.get("password", [""])[0]
            if password != "hunter2":
                self._send(self._page("Sign in", "<p>Wrong password</p>"))
                return
            self.send_response(303)
            self.send_header("Location", "/account")
            self.send_header("Set-Cookie", f"who={user}; Path=/; HttpOnly")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)

    def log_message(self, format: str, *args: object) -> None:
        pass
