"""The media layer on the kinds of file people send: types judged by content, disguises and
oversized files refused in one line, the cache bounded, documents read, images made ready
for a model, data: URLs decoded."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest
from PIL import Image

from hermes_commons.media_read import document_text, model_image
from hermes_commons.media_urls import from_data_url
from hermes_sdk.media import Attachment, MediaCache, MediaLimits, MediaRefused
from hermes_testkit.audio_server import tone_wav
from hermes_testkit.media_files import disguised_program, photo_bytes


@pytest.fixture
def cache(tmp_path: Path) -> MediaCache:
    return MediaCache(tmp_path / "media")


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGBA", (40, 30), (0, 0, 255, 128)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "name", "declared", "kind", "mime"),
    [
        (photo_bytes((64, 48)), "IMG_0001.JPG", "image/jpeg", "image", "image/jpeg"),
        (_png(), "", None, "image", "image/png"),
        (photo_bytes((64, 48)), "photo", "application/octet-stream", "image", "image/jpeg"),
        (tone_wav(0.2), "memo.wav", None, "audio", "audio/x-wav"),
        (b"%PDF-1.4\n", "a.pdf", "application/pdf", "document", "application/pdf"),
        (b"a,b\n1,2\n", "t.csv", "text/csv", "document", "text/csv"),
        (b"def f():\n    return 1\n", "f.py", None, "document", "text/plain"),
        (
            b'<svg xmlns="http://www.w3.org/2000/svg"/>',
            "logo.svg",
            None,
            "document",
            "image/svg+xml",
        ),
        ("na\u00efve caf\u00e9".encode(), "notes.txt", None, "document", "text/plain"),
        (bytes(range(256)) * 4, "blob.bin", None, "file", "application/octet-stream"),
    ],
)
def test_the_type_comes_from_the_content(cache, data, name, declared, kind, mime):
    found = cache.ingest(data, name=name, declared=declared)
    assert (found.kind, found.mime, found.size) == (kind, mime, len(data))
    assert Path(found.path).read_bytes() == data
    assert found.name == (name or f"{kind}.png")


@pytest.mark.parametrize(
    ("data", "name", "declared", "expect", "line"),
    [
        (
            disguised_program(), "cat.png", None, None,
            "cat.png is refused: it is an executable program (application/x-executable) "
            "sent as .png",
        ),
        (
            disguised_program(), "setup", None, None,
            "setup is refused: it is an executable program (application/x-executable)",
        ),
        (
            b"just some text", "holiday.jpg", "image/jpeg", None,
            "holiday.jpg is refused: it is sent as image/jpeg but its content is "
            "text/plain",
        ),
        (
            b"%PDF-1.4\n", "scan.png", None, "image",
            "scan.png is refused: it is sent as an image but its content is "
            "application/pdf",
        ),
        (b"", "empty.pdf", None, None, "empty.pdf is refused: it is empty"),
    ],
)  # fmt: skip
def test_a_disguised_or_empty_file_is_refused_in_one_line(
    cache, data, name, declared, expect, line
):
    with pytest.raises(MediaRefused) as refused:
        cache.ingest(data, name=name, declared=declared, expect=expect)
    assert str(refused.value) == line
    assert not cache.folder.exists() or not any(cache.folder.iterdir())


def test_sound_in_a_video_container_is_not_a_disguise(cache):
    # An .m4a voice memo is an MP4 file: its content may be sniffed as video.
    mp4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + bytes(64)
    found = cache.ingest(mp4, name="memo.m4a", declared="audio/mp4")
    assert found.kind in ("audio", "video")


def test_each_kind_has_its_cap(tmp_path):
    limits = MediaLimits.from_config({"media": {"max_mb": {"document": 0.001}}})
    cache = MediaCache(tmp_path, limits)
    with pytest.raises(MediaRefused) as refused:
        cache.ingest(b"%PDF-1.4\n" + bytes(2000), name="big.pdf")
    assert str(refused.value) == (
        "big.pdf is refused: 2 KB is over the 1 KB cap for a document (media.max_mb.document)"
    )
    assert cache.ingest(photo_bytes((32, 32)), name="p.jpg").kind == "image"  # its own cap


def test_the_same_file_is_kept_once_and_the_cache_stays_bounded(tmp_path):
    cache = MediaCache(tmp_path, MediaLimits(cache_bytes=3000, keep_seconds=3600))
    first = cache.ingest(b"a" * 1000, name="a.txt")
    assert cache.ingest(b"a" * 1000, name="again.txt").path == first.path
    old = time.time() - 100
    os.utime(first.path, (old, old))
    for letter in "bcd":
        cache.ingest(letter.encode() * 1000, name=f"{letter}.txt")
    assert cache.clean() == 1  # 4000 bytes kept in a 3000-byte cache: the oldest goes
    assert not Path(first.path).exists()
    stale = cache.ingest(b"e" * 10, name="e.txt")
    os.utime(stale.path, (time.time() - 7200,) * 2)
    cache.clean()
    assert not Path(stale.path).exists()  # unused past keep_seconds


def test_a_file_no_longer_kept_says_so(cache):
    found = cache.ingest(b"hello", name="h.txt")
    Path(found.path).unlink()
    with pytest.raises(MediaRefused, match=r"h\.txt is no longer kept"):
        found.read_bytes()


def test_an_image_for_a_model_is_upright_scaled_and_stripped(cache):
    photo = cache.ingest(photo_bytes((3000, 2000)), name="p.jpg")
    part = model_image(photo, max_side=1000)
    image = Image.open(io.BytesIO(part.data))
    assert part.mime == "image/jpeg" and image.size == (667, 1000)  # turned by its EXIF
    assert not image.getexif()
    transparent = cache.ingest(_png(), name="t.png")
    assert model_image(transparent).mime == "image/png"  # transparency kept
    broken = cache.ingest(b"\xff\xd8\xff" + bytes(100), name="b.jpg")
    with pytest.raises(MediaRefused, match=r"b\.jpg could not be read as an image"):
        model_image(broken)


def test_documents_are_read_and_cut(cache):
    text = cache.ingest(b"line\n" * 10_000, name="log.txt")
    read = document_text(text, max_chars=1000)
    assert read.startswith("line\nline") and read.endswith(
        "[… cut at 1,000 characters (media.document_chars)]"
    )
    latin = cache.ingest("caf\xe9".encode("latin-1"), name="old.txt", declared="text/plain")
    assert document_text(latin) == "caf\xe9"
    broken_pdf = cache.ingest(b"%PDF-1.4\nnot really", name="x.pdf")
    assert document_text(broken_pdf).startswith("[the PDF could not be read:")


def test_data_urls(cache):
    import base64

    png = from_data_url(f"data:image/png;base64,{base64.b64encode(_png()).decode()}", cache)
    assert (png.kind, png.name) == ("image", "file.png")
    plain = from_data_url("data:text/plain,hello%20there", cache)
    assert Path(plain.path).read_bytes() == b"hello there"
    with pytest.raises(MediaRefused, match="has no ','"):
        from_data_url("data:image/png;base64", cache)


def test_an_attachment_survives_the_store_as_a_dict(cache):
    found = cache.ingest(b"a,b\n", name="t.csv").with_text("[1 rows]", "its text")
    assert Attachment.from_dict(found.as_dict()) == found
    assert Attachment.from_dict({"kind": "weird"}).kind == "file"


def test_awkward_images_are_read_or_refused_never_a_crash(cache):
    thin = io.BytesIO()
    Image.new("RGB", (4000, 2), "white").save(thin, "JPEG")
    part = model_image(cache.ingest(thin.getvalue(), name="line.jpg"))
    assert Image.open(io.BytesIO(part.data)).size[0] == 1568
    bomb = io.BytesIO()
    Image.new("1", (9000, 9000)).save(bomb, "PNG")  # 81 megapixels of nothing
    with pytest.raises(
        MediaRefused, match=r"bomb\.png could not be read as an image: it is 9000 x 9000 pixels"
    ):
        model_image(cache.ingest(bomb.getvalue(), name="bomb.png"))


def test_awkward_documents_are_a_note_never_a_crash(cache):
    docx_mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    broken = cache.ingest(b"PK\x03\x04" + bytes(200), name="broken.docx", declared=docx_mime)
    assert document_text(broken).startswith("[")
    wide = cache.ingest(b"a,b\n" + b"x" * 200_000 + b",1\n", name="wide.csv")
    assert document_text(wide, max_chars=5000).endswith("(media.document_chars)]")


def test_a_program_is_refused_whatever_it_is_called(cache):
    for name, declared in [("setup.exe", None), ("tool", "application/x-msdownload")]:
        with pytest.raises(MediaRefused, match="is refused: it is an executable program"):
            cache.ingest(disguised_program(), name=name, declared=declared)
