"""Attachments made ready for a model: an image re-encoded within a provider's limit with
its metadata stripped, and a document's text.

These need the SDK's ``media`` extra (Pillow, pypdf, python-docx), imported on first use::

    pip install 'hermes-sdk[media]'
"""

from __future__ import annotations

import csv
import io
import os
import threading
from pathlib import Path

from hermes_sdk.media import Attachment, MediaRefused
from hermes_sdk.models import ImagePart

__all__ = ["DOCUMENT_CHARS", "IMAGE_MAX_BYTES", "IMAGE_MAX_SIDE", "document_text", "model_image"]

IMAGE_MAX_SIDE = 1568
"""Longest side sent to a model, in pixels: Anthropic's recommended size, within OpenAI's
high-detail tiles; larger images only cost tokens."""
IMAGE_MAX_BYTES = 3_750_000
"""Encoded size sent to a model (Anthropic's per-image limit is 5 MB of base64)."""
DOCUMENT_CHARS = 30_000
"""A document's text is cut here, as a web page's is (``web.page_chars``)."""

_KEEPS_ALPHA = ("RGBA", "LA", "PA")
MAX_PIXELS = 60_000_000
"""Larger images are refused (a 60-megapixel photo is far beyond any phone's; a
decompression bomb is far beyond this)."""


def model_image(
    attachment: Attachment,
    *,
    max_side: int = IMAGE_MAX_SIDE,
    max_bytes: int = IMAGE_MAX_BYTES,
) -> ImagePart:
    """The image as a model gets it: turned upright by its EXIF orientation, scaled down to
    ``max_side``, and encoded again (JPEG, or PNG where it has transparency), so no EXIF,
    GPS or other metadata goes out. The result is cached beside the original.
    Raises MediaRefused when the file is gone or is not an image Pillow can read."""
    cached = Path(f"{attachment.path}.{max_side}.model")
    if cached.exists():
        data = cached.read_bytes()
        return ImagePart("image/png" if data.startswith(b"\x89PNG") else "image/jpeg", data)
    raw = attachment.read_bytes()
    try:
        part = _prepared(raw, max_side, max_bytes)
    except Exception as exc:  # noqa: BLE001 - Pillow raises many kinds; any is one refusal
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise MediaRefused(f"{attachment.label()} could not be read as an image: {why}") from None
    # Written whole or not at all: a half-written file would be sent on every later turn.
    temporary = cached.with_name(f".{cached.name}.{os.getpid()}.{threading.get_ident()}")
    temporary.write_bytes(part.data)
    os.replace(temporary, cached)
    return part


def _prepared(raw: bytes, max_side: int, max_bytes: int) -> ImagePart:
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(raw)) as opened:
        width, height = opened.size
        if width * height > MAX_PIXELS:
            raise ValueError(
                f"it is {width} x {height} pixels, over the {MAX_PIXELS:,} Hermes reads"
            )
        opened.seek(0)  # an animation's first frame
        # A JPEG is decoded at a fraction of its size when that still covers max_side
        # (libjpeg's DCT scaling): a 12-megapixel photo decodes at 1/2 or 1/4.
        scale = min(1.0, max_side / max(width, height, 1))
        opened.draft("RGB", (max(1, int(width * scale)), max(1, int(height * scale))))
        image = ImageOps.exif_transpose(opened)
        image.load()
    side = max_side
    while True:
        scaled = image.copy()
        scaled.thumbnail((side, side), Image.Resampling.LANCZOS)
        part = _encoded(scaled, _KEEPS_ALPHA)
        if len(part.data) <= max_bytes or side <= 256:
            return part
        side = int(side * 0.75)


def _encoded(image: object, keeps_alpha: tuple[str, ...]) -> ImagePart:
    from PIL import Image

    assert isinstance(image, Image.Image)
    buffer = io.BytesIO()
    if image.mode in keeps_alpha or (image.mode == "P" and "transparency" in image.info):
        image.convert("RGBA").save(buffer, format="PNG", optimize=True)
        return ImagePart("image/png", buffer.getvalue())
    image.convert("RGB").save(buffer, format="JPEG", quality=85, optimize=True)
    return ImagePart("image/jpeg", buffer.getvalue())


def document_text(attachment: Attachment, max_chars: int = DOCUMENT_CHARS) -> str:
    """A document's text (PDF, DOCX, CSV, text and code), cut at ``max_chars`` with a note
    saying so. A document that cannot be read gives one bracketed line saying why."""
    data = attachment.read_bytes()
    mime = attachment.mime
    try:
        if mime == "application/pdf":
            text = _pdf(data, max_chars)
        elif mime.endswith("wordprocessingml.document"):
            text = _docx(data)
        elif mime == "text/csv":
            text = _csv(_decoded(data))
        elif mime.startswith("text/") or mime.endswith(("json", "xml")):
            text = _decoded(data)
        else:
            return f"[{mime} content: not a document Hermes reads]"
    except Exception as exc:  # noqa: BLE001 - a broken document is a note, never a failed turn
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        return f"[{attachment.label()} could not be read: {why}]"
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[… cut at {max_chars:,} characters (media.document_chars)]"
    return text


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # every byte is a character: nothing is lost


def _pdf(data: bytes, max_chars: int) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    pages: list[str] = []
    try:
        reader = PdfReader(io.BytesIO(data))
        for page in reader.pages:  # only as many pages as the cut will keep
            pages.append(page.extract_text() or "")
            if sum(map(len, pages)) > max_chars:
                break
    except (PdfReadError, ValueError, KeyError) as exc:
        return f"[the PDF could not be read: {exc}]"
    text = "\n\n".join(f"[page {n}]\n{page.strip()}" for n, page in enumerate(pages, 1))
    if not any(page.strip() for page in pages):
        text += "\n[the PDF has no text layer: it may be scanned images]"
    return text


def _docx(data: bytes) -> str:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, ValueError, KeyError) as exc:
        return f"[the DOCX could not be read: {exc}]"
    lines = [paragraph.text for paragraph in document.paragraphs]
    for number, table in enumerate(document.tables, 1):
        lines.append(f"[table {number}]")
        lines.extend(" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows)
    return "\n".join(lines).strip()


def _csv(text: str) -> str:
    """Rows as ``a | b | c`` lines (any delimiter the sniffer recognises), with a count."""
    try:
        dialect = csv.Sniffer().sniff(text[:4096])
        rows = list(csv.reader(io.StringIO(text), dialect))
    except csv.Error:  # not a table after all (or a field past the csv module's limit)
        return text
    body = "\n".join(" | ".join(cell.strip() for cell in row) for row in rows)
    return f"[{len(rows)} rows]\n{body}"
