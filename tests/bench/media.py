"""What media costs: nothing for text, and how long a photo and a spoken reply take.

    uv run python tests/bench/media.py [--base /path/to/other/checkout/.venv/bin/hermes]

1. **No cost to text.** The first request of ``hermes chat -q hi`` (a fresh home, the same
   working directory) against a loopback model server. With ``--base``, the same one-shot
   of another installation (main before the media layer) runs too, and the two requests
   are compared: their Content-Length and their JSON, key order included. Target: equal.
   Both one-shots are also timed, alternating run by run. Target: no slower than base.
2. **A photo.** A 12-megapixel phone JPEG (4000 x 3000, with EXIF) sent with ``--image``:
   the one-shot's wall time against the text-only one-shot's (the floor, the same run),
   and the image's bytes as sent (scaled to 1568 px, re-encoded) against the file's.
3. **A spoken reply.** ``text_to_speech`` for a 300-character answer (espeak-ng, then
   ffmpeg to OGG/Opus, kept and handed to the turn), against the same two programs with
   the same settings run by hand (the floor).

Run with bytecode compiled (``python -m compileall``), as an install has it.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_testkit import Reply, ScriptedOpenAIServer
from hermes_testkit.image_checks import images_in


def _env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("HERMES_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["HERMES_HOME"] = str(home)
    return env


def _home(server: ScriptedOpenAIServer, extra: str = "") -> Path:
    home = Path(tempfile.mkdtemp(prefix="hermes-media-bench-"))
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {server.base_url}\n  default: test-model\n{extra}"
    )
    return home


def _one_shot(hermes: str, home: Path, cwd: Path, *extra: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [hermes, "chat", "-q", "hi", *extra],
        env=_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{hermes} failed: {done.stderr[-500:]}")
    return (time.perf_counter() - started) * 1000


def _first_request(hermes: str, cwd: Path) -> tuple[str, Any]:
    with ScriptedOpenAIServer(default=Reply.say("Hello!")) as server:
        _one_shot(hermes, _home(server), cwd)
        request = server.requests[0]
        return request.headers.get("content-length", "?"), request.json


def no_cost_to_text(hermes: str, base: str | None, cwd: Path) -> None:
    length, body = _first_request(hermes, cwd)
    print(f"text-only first request: {length} bytes, {len(body.get('tools', []))} tool schemas")
    if base is None:
        print("  (give --base HERMES of a checkout before the media layer to compare)")
        return
    base_length, base_body = _first_request(base, cwd)
    same_json = list(body.items()) == list(base_body.items()) and body == base_body
    verdict = "EQUAL" if same_json and length == base_length else "DIFFERENT"
    print(f"  base's first request: {base_length} bytes; the two are {verdict}")
    if verdict == "DIFFERENT":
        for key in sorted(set(body) | set(base_body)):
            if body.get(key) != base_body.get(key):
                print(f"  differs at {key!r}")


def one_shot_against_base(hermes: str, base: str | None, cwd: Path, runs: int) -> None:
    """The text-only one-shot of both installations, alternating run by run so the
    machine's noise falls on both alike: the one-shot bench's figure, without its floor."""
    if base is None:
        return
    with ScriptedOpenAIServer(default=Reply.say("Hello!")) as server:
        ours_home, base_home = _home(server), _home(server)
        _one_shot(hermes, ours_home, cwd)
        _one_shot(base, base_home, cwd)
        ours, theirs = [], []
        for _ in range(runs):
            ours.append(_one_shot(hermes, ours_home, cwd))
            theirs.append(_one_shot(base, base_home, cwd))
    mine, before = statistics.median(ours), statistics.median(theirs)
    print(f"text-only one-shot: {mine:.0f} ms here, {before:.0f} ms for base: {mine / before:.2f}x")


def _phone_photo() -> bytes:
    from PIL import Image

    exif = Image.Exif()
    exif[0x010F] = "PhoneMaker"
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0)}
    pixels = Image.effect_noise((4000, 3000), 64).convert("RGB")  # a photo-like, busy image
    buffer = io.BytesIO()
    pixels.save(buffer, "JPEG", quality=90, exif=exif)
    return buffer.getvalue()


def a_photo(hermes: str, cwd: Path, runs: int) -> None:
    photo = cwd / "photo.jpg"
    photo.write_bytes(_phone_photo())
    with ScriptedOpenAIServer(default=Reply.say("A photo.")) as server:
        home = _home(server, "  vision: true\n")
        _one_shot(hermes, home, cwd)  # warm: the discovery cache, bytecode
        text_ms, photo_ms = [], []
        sent = 0
        for _ in range(runs):
            text_ms.append(_one_shot(hermes, home, cwd))
            shutil.rmtree(home / "cache" / "media", ignore_errors=True)  # a new photo each time
            photo_ms.append(_one_shot(hermes, home, cwd, "--image", str(photo)))
            sent = len(images_in(server.requests[-1].json)[0][1])
    text, image = statistics.median(text_ms), statistics.median(photo_ms)
    print(f"one-shot, text only        {text:7.0f} ms (floor)")
    print(f"one-shot with a 12 MP photo {image:7.0f} ms   {image / text:.2f}x the floor")
    size = photo.stat().st_size
    print(f"  the photo: {size / 1e6:.1f} MB on disk, {sent / 1e6:.2f} MB sent ({sent / size:.0%})")


def a_spoken_reply(runs: int) -> None:
    from hermes_plugin_voice.tool import text_to_speech

    from hermes_sdk.tooling import ToolContext

    if shutil.which("espeak-ng") is None or shutil.which("ffmpeg") is None:
        print("spoken reply: skipped (apt-get install espeak-ng ffmpeg)")
        return
    text = ("Your meeting moved to three, and the report is due on Friday. " * 5)[:300]
    home = Path(tempfile.mkdtemp(prefix="hermes-media-bench-"))
    context = ToolContext(session_id="b", home=str(home), cwd=str(home), send=lambda _a: None)
    spoken, floor = [], []
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(text_to_speech(text, context=context))
        spoken.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        wav = subprocess.run(
            ["espeak-ng", "--stdin", "--stdout"], input=text.encode(), capture_output=True,
            check=True,
        ).stdout  # fmt: skip
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-i", "pipe:0", "-c:a", "libopus", "-b:a", "32k",
             "-ac", "1", "-ar", "48000", "-application", "voip", "-compression_level", "5",
             "-f", "ogg", "pipe:1"],
            input=wav, capture_output=True, check=True,
        )  # fmt: skip
        floor.append((time.perf_counter() - started) * 1000)
    ours, bare = statistics.median(spoken), statistics.median(floor)
    print(f"espeak-ng, then ffmpeg      {bare:7.0f} ms (floor: the two programs alone)")
    print(f"text_to_speech, 300 chars   {ours:7.0f} ms   {ours / bare:.2f}x the floor")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the hermes of another checkout, to compare requests")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    hermes = str(Path(sys.executable).parent / "hermes")
    cwd = Path(tempfile.mkdtemp(prefix="hermes-media-bench-cwd-"))
    no_cost_to_text(hermes, args.base, cwd)
    one_shot_against_base(hermes, args.base, cwd, 3 * args.runs)
    a_photo(hermes, cwd, args.runs)
    a_spoken_reply(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
