"""``hermes chat --image``: a photo reaches a model that sees as an image in its wire format
(checked by the kit's servers, which refuse a malformed part as the services do), scaled
and with its camera metadata gone; a model that does not see gets the auxiliary model's
description; a disguised or oversized file is refused in one line and nothing is sent."""

from __future__ import annotations

import io
import json

from PIL import Image

from hermes_testkit import Reply
from hermes_testkit.anthropic_server import ScriptedAnthropicServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.openai_server import ScriptedOpenAIServer


def _sent_image(body: dict) -> Image.Image:
    found = images_in(body)
    assert len(found) == 1, body
    mime, data = found[0]
    assert mime == "image/jpeg"
    return Image.open(io.BytesIO(data))


def _assert_ready_for_a_model(image: Image.Image) -> None:
    assert max(image.size) == 1568  # scaled to the limit
    assert image.size[0] < image.size[1]  # turned upright by its orientation tag
    assert not image.getexif(), "camera make, GPS and orientation are stripped"
    assert image.getpixel((10, 10))[0] > 200  # still the red photo


def test_an_image_reaches_an_openai_vision_model_as_an_image_url_part(hermes, photo):
    with ScriptedOpenAIServer() as server:
        hermes.config(f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\n")
        server.queue(Reply.say("A red square."))
        result = hermes("chat", "-q", "What is in this photo?", "--image", str(photo))
        assert result.code == 0, result.err
        assert result.out == "A red square.\n"
        user = server.requests[0].json["messages"][-1]
        assert user["content"][0] == {"type": "text", "text": "What is in this photo?"}
        assert user["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
        _assert_ready_for_a_model(_sent_image(server.requests[0].json))


def test_an_image_reaches_claude_as_an_image_block(hermes, photo, monkeypatch):
    monkeypatch.setenv("CLAUDE_KEY", "sk-ant-test")
    with ScriptedAnthropicServer() as server:
        hermes.config(
            "model:\n  provider: claude\n"
            f"providers:\n  claude:\n    base_url: {server.base_url}\n    transport: anthropic\n"
            "    default_model: claude-sonnet-4-5\n    api_key_env: CLAUDE_KEY\n"
        )
        server.queue(Reply.say("Red."))
        result = hermes("chat", "-q", "Colour?", "--image", str(photo))
        assert result.code == 0, result.err
        blocks = server.requests[0].json["messages"][-1]["content"]
        assert [block["type"] for block in blocks] == ["image", "text"]
        assert blocks[0]["source"]["type"] == "base64"
        _assert_ready_for_a_model(_sent_image(server.requests[0].json))


def test_a_text_only_model_gets_the_auxiliary_models_description(hermes, photo):
    with ScriptedOpenAIServer() as main, ScriptedOpenAIServer() as helper:
        hermes.config(
            f"model:\n  base_url: {main.base_url}\n  default: test-model\n"
            f"providers:\n  eyes:\n    base_url: {helper.base_url}\n    models: [gpt-4o-mini]\n"
            "auxiliary:\n  provider: eyes\n  model: gpt-4o-mini\n"
        )
        helper.queue(Reply.say("A plain red rectangle, taller than wide, with no text."))
        main.queue(Reply.say("It is red."))
        result = hermes("chat", "-q", "What colour?", "--image", str(photo))
        assert result.code == 0, result.err
        assert "described by the auxiliary model (eyes / gpt-4o-mini)" in result.err
        assert len(images_in(helper.requests[0].json)) == 1  # the helper saw it
        sent = main.requests[0].json["messages"][-1]["content"]
        assert isinstance(sent, str) and not images_in(main.requests[0].json)
        assert sent.startswith("What colour?\n\n[image: holiday.jpg, image/jpeg,")
        assert "A plain red rectangle, taller than wide" in sent
        # Stored with the message: the next turn does not ask the helper again.
        main.queue(Reply.say("Yes."))
        again = hermes("chat", "-q", "Sure?", "--continue")
        assert again.code == 0, again.err
        assert len(helper.requests) == 1
        assert "A plain red rectangle" in main.requests[1].json["messages"][1]["content"]


def test_with_no_model_that_sees_the_user_is_told_and_the_model_gets_the_name(hermes, photo):
    with ScriptedOpenAIServer() as server:
        hermes.config(f"model:\n  base_url: {server.base_url}\n  default: test-model\n")
        server.queue(Reply.say("I cannot see it."))
        result = hermes("chat", "-q", "Look", "--image", str(photo))
        assert result.code == 0, result.err
        assert "does not see images and no auxiliary model that does is set" in result.err
        assert "model.vision: true" in result.err
        sent = server.requests[0].json["messages"][-1]["content"]
        assert sent.startswith("Look\n\n[image: holiday.jpg, image/jpeg,")


def test_model_vision_in_config_decides_for_a_model_no_table_knows(hermes, photo):
    with ScriptedOpenAIServer() as server:
        hermes.config(
            f"model:\n  base_url: {server.base_url}\n  default: my-local-vlm\n  vision: true\n"
        )
        server.queue(Reply.say("Red."))
        assert hermes("chat", "-q", "Colour?", "--image", str(photo)).code == 0
        assert len(images_in(server.requests[0].json)) == 1


def test_a_disguised_program_is_refused_in_one_line_and_nothing_is_sent(hermes, disguised):
    with ScriptedOpenAIServer() as server:
        hermes.config(f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\n")
        result = hermes("chat", "-q", "Look", "--image", str(disguised))
        assert result.code == 1 and result.out == ""
        assert result.err.strip().splitlines() == [
            "hermes: error: cute-cat.png is refused: it is an executable program "
            "(application/x-executable) sent as an image"
        ]
        assert server.requests == []


def test_an_oversized_image_is_refused_in_one_line(hermes, photo):
    with ScriptedOpenAIServer() as server:
        hermes.config(
            f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\n"
            "media:\n  max_mb:\n    image: 0.05\n"
        )
        result = hermes("chat", "-q", "Look", "--image", str(photo))
        assert result.code == 1
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hermes: error: holiday.jpg is refused: ")
        assert "over the 50 KB cap for an image (media.max_mb.image)" in lines[0]
        assert server.requests == []


def test_a_missing_file_is_one_line(hermes, tmp_path):
    hermes.config("model:\n  base_url: http://127.0.0.1:9\n  default: gpt-4o\n")
    result = hermes("chat", "-q", "Look", "--image", str(tmp_path / "nope.png"))
    assert result.code == 1
    assert result.err.strip() == f"hermes: error: {tmp_path / 'nope.png'} is refused: no such file"


def _pdf_saying(text: str) -> bytes:
    """A one-page PDF with ``text`` in its text layer, written out by hand."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        table,
    )
    return bytes(out)


def test_a_pdf_a_docx_and_a_csv_reach_the_model_as_text(hermes, tmp_path):
    import docx

    csv_file = tmp_path / "sales.csv"
    csv_file.write_text("month;total\nJan;10\nFeb;12\n")
    pdf_file = tmp_path / "invoice.pdf"
    pdf_file.write_bytes(_pdf_saying("Invoice 4471 total 99 EUR"))
    word = docx.Document()
    word.add_paragraph("Minutes of the meeting")
    word.add_table(rows=1, cols=2).rows[0].cells[0].text = "owner"
    docx_file = tmp_path / "minutes.docx"
    word.save(str(docx_file))
    with ScriptedOpenAIServer() as server:
        hermes.config(f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\n")
        server.queue(Reply.say("22 in all."))
        files = ["--file", str(csv_file), "--file", str(pdf_file), "--file", str(docx_file)]
        result = hermes("chat", "-q", "Sum it", *files, "--json")
        assert result.code == 0, result.err
        sent = server.requests[0].json["messages"][-1]["content"]
        assert "[document: sales.csv, text/csv, 26 bytes] (its text)" in sent
        assert "[3 rows]\nmonth | total\nJan | 10\nFeb | 12" in sent
        assert "[document: invoice.pdf, application/pdf," in sent
        assert "[page 1]\nInvoice 4471 total 99 EUR" in sent
        assert "wordprocessingml.document" in sent and "Minutes of the meeting" in sent
        assert "[table 1]\nowner |" in sent
        assert json.loads(result.out)["reply"] == "22 in all."


def test_a_fallback_that_does_not_see_gets_a_note_instead_of_the_image(hermes, photo):
    with ScriptedOpenAIServer() as main, ScriptedOpenAIServer() as backup:
        hermes.config(
            f"model:\n  base_url: {main.base_url}\n  default: gpt-4o\n"
            "  fallback_providers: [{provider: backup, model: test-model}]\n"
            f"providers:\n  backup:\n    base_url: {backup.base_url}\n    models: [test-model]\n"
            "agent:\n  retries: 1\n"
        )
        main.queue(Reply.error(500))
        backup.queue(Reply.say("The backup answered."))
        result = hermes("chat", "-q", "What is it?", "--image", str(photo))
        assert result.code == 0, result.err
        assert len(images_in(main.requests[0].json)) == 1  # the primary saw it
        sent = backup.requests[0].json["messages"][-1]["content"]
        assert isinstance(sent, str) and not images_in(backup.requests[0].json)
        assert sent == "What is it?\n\n[an image was attached here; this model cannot see it]"


def test_model_vision_speaks_for_the_main_model_only(hermes, photo):
    with ScriptedOpenAIServer() as main, ScriptedOpenAIServer() as helper:
        hermes.config(
            f"model:\n  base_url: {main.base_url}\n  default: my-text-model\n  vision: false\n"
            f"providers:\n  eyes:\n    base_url: {helper.base_url}\n    models: [gpt-4o-mini]\n"
            "auxiliary:\n  provider: eyes\n  model: gpt-4o-mini\n"
        )
        helper.queue(Reply.say("A red rectangle."))  # the auxiliary still sees, by its table
        main.queue(Reply.say("Red."))
        assert hermes("chat", "-q", "Colour?", "--image", str(photo)).code == 0
        assert "A red rectangle." in main.requests[0].json["messages"][-1]["content"]
