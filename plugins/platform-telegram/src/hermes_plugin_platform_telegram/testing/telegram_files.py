"""Files in the fake Bot API: what users send (photos, voice notes, audio, documents) and the
bot downloads with getFile and ``GET /file/bot<token>/<file_path>``, and what the bot sends
with sendPhoto, sendVoice, sendAudio and sendDocument (multipart uploads).

As Telegram does, a photo comes as several sizes (the largest last), getFile refuses a file
over 20 MB ("file is too big"), a file path is only good for the token that asked for it,
and an upload with no file part or an empty one is refused."""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["SentFile", "TelegramFailure", "TelegramFiles", "Upload", "multipart_parameters"]

BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024
"""The largest file a bot may download through getFile."""

_UPLOAD_FIELDS = {
    "sendPhoto": "photo",
    "sendVoice": "voice",
    "sendAudio": "audio",
    "sendDocument": "document",
}


class TelegramFailure(Exception):
    """An error reply: ``error_code``, ``description``, and ``retry_after`` for flood control."""

    def __init__(
        self, code: int, description: str, retry_after: int | None = None, html: bool = False
    ) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after
        self.html = html
        """Answered as a proxy's HTML page, not the Bot API's JSON (a 502 from nginx)."""


@dataclass(frozen=True)
class Upload:
    """A file part of a multipart request."""

    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class SentFile:
    """A file the bot sent: which method, the file part, and the other parameters."""

    message_id: int
    method: str
    chat_id: int
    upload: Upload
    caption: str | None
    params: dict[str, Any]


def multipart_parameters(content_type: str, body: bytes) -> dict[str, Any]:
    """The fields of a ``multipart/form-data`` body: text as strings, files as Uploads."""
    parser = email.parser.BytesParser(policy=email.policy.HTTP)
    message = parser.parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise ValueError("not a multipart body")
    params: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            params[name] = Upload(filename, part.get_content_type(), data)
        else:
            params[name] = data.decode(part.get_content_charset() or "utf-8")
    return params


class TelegramFiles:
    """The file half of :class:`~.telegram_server.FakeTelegram`."""

    token: str
    bot: dict[str, Any]
    _lock: threading.Condition

    def _init_files(self) -> None:
        self._files: dict[str, tuple[bytes, str]] = {}  # file_id -> (data, file_path)
        self._file_numbers = itertools.count(1)
        self.files_sent: list[SentFile] = []
        """Files the bot sent, in order."""
        self.downloads: list[str] = []
        """The file paths the bot downloaded, in order."""

    # --- what users send ---------------------------------------------------------------------

    def add_file(self, data: bytes, extension: str) -> dict[str, Any]:
        """Keep ``data`` as Telegram would; its File object (file_id, size, path)."""
        number = next(self._file_numbers)
        file_id = f"file-{number}-{len(data)}"
        path = f"files/file_{number}{extension}"
        with self._lock:
            self._files[file_id] = (data, path)
        return {
            "file_id": file_id,
            "file_unique_id": f"unique-{number}",
            "file_size": len(data),
            "file_path": path,
        }

    def _user_sends(
        self, user_id: int, fields: dict[str, Any], caption: str | None, chat_id: int | None
    ) -> int:
        raise NotImplementedError  # FakeTelegram sends the message

    def user_sends_photo(
        self, user_id: int, data: bytes, *, caption: str | None = None, chat_id: int | None = None
    ) -> int:
        """A photo as Telegram delivers it: a thumbnail and the full size (the last)."""
        thumb = self.add_file(data[: max(1, len(data) // 20)], ".jpg")
        full = self.add_file(data, ".jpg")
        sizes = [
            {**_public(thumb), "width": 90, "height": 60},
            {**_public(full), "width": 1280, "height": 853},
        ]
        return self._user_sends(user_id, {"photo": sizes}, caption, chat_id)

    def user_sends_voice(
        self, user_id: int, data: bytes, *, duration: int, chat_id: int | None = None
    ) -> int:
        """A voice note (OGG/Opus, as Telegram's apps record them)."""
        voice = {**_public(self.add_file(data, ".oga")), "duration": duration}
        voice["mime_type"] = "audio/ogg"
        return self._user_sends(user_id, {"voice": voice}, None, chat_id)

    def user_sends_document(
        self,
        user_id: int,
        data: bytes,
        *,
        file_name: str,
        mime_type: str,
        caption: str | None = None,
        chat_id: int | None = None,
        file_size: int | None = None,
    ) -> int:
        """A file sent as a document; ``file_size`` overrides the announced size."""
        document = {**_public(self.add_file(data, "")), "file_name": file_name}
        document["mime_type"] = mime_type
        if file_size is not None:
            document["file_size"] = file_size
        return self._user_sends(user_id, {"document": document}, caption, chat_id)

    # --- the protocol ------------------------------------------------------------------------

    def _api_getFile(self, params: dict[str, Any]) -> Any:
        file_id = str(params.get("file_id") or "")
        with self._lock:
            found = self._files.get(file_id)
        if found is None:
            raise TelegramFailure(400, "Bad Request: invalid file_id")
        data, path = found
        if len(data) > BOT_DOWNLOAD_LIMIT:
            raise TelegramFailure(400, "Bad Request: file is too big")
        return {
            "file_id": file_id,
            "file_unique_id": f"unique-{file_id}",
            "file_size": len(data),
            "file_path": path,
        }

    def file_content(self, token: str, path: str) -> bytes | None:
        """``GET /file/bot<token>/<path>``: the file's bytes, None when there is none."""
        if token != self.token:
            return None
        with self._lock:
            for data, file_path in self._files.values():
                if file_path == path:
                    self.downloads.append(path)
                    return data
        return None

    def _uploaded(self, method: str, params: dict[str, Any]) -> Any:
        field = _UPLOAD_FIELDS[method]
        upload = params.get(field)
        if "chat_id" not in params:
            raise TelegramFailure(400, "Bad Request: chat_id is empty")
        if not isinstance(upload, Upload):
            raise TelegramFailure(400, f"Bad Request: there is no {field} in the request")
        if not upload.data:
            raise TelegramFailure(400, "Bad Request: file must be non-empty")
        message_id = self._new_message_id()
        caption = params.get("caption")
        sent = SentFile(
            message_id,
            method,
            int(params["chat_id"]),
            upload,
            str(caption) if caption is not None else None,
            {k: v for k, v in params.items() if k != field},
        )
        stored = _public(self.add_file(upload.data, ""))
        described: dict[str, Any] = {**stored, "file_size": len(upload.data)}
        if field in ("voice", "audio"):
            described["mime_type"] = upload.content_type
            described["duration"] = int(params.get("duration") or 0)
        with self._lock:
            self.files_sent.append(sent)
            self._lock.notify_all()
        result: dict[str, Any] = {
            "message_id": message_id,
            "from": self.bot,
            "chat": {"id": sent.chat_id, "type": "private" if sent.chat_id > 0 else "supergroup"},
            "date": int(time.time()),
            field: [described] if field == "photo" else described,
        }
        if caption:
            result["caption"] = caption
        return result

    def _new_message_id(self) -> int:
        raise NotImplementedError  # FakeTelegram numbers messages

    def _api_sendPhoto(self, params: dict[str, Any]) -> Any:
        return self._uploaded("sendPhoto", params)

    def _api_sendVoice(self, params: dict[str, Any]) -> Any:
        return self._uploaded("sendVoice", params)

    def _api_sendAudio(self, params: dict[str, Any]) -> Any:
        return self._uploaded("sendAudio", params)

    def _api_sendDocument(self, params: dict[str, Any]) -> Any:
        return self._uploaded("sendDocument", params)

    def wait_for_file(self, chat_id: int, timeout: float = 10.0) -> SentFile:
        """The first file sent to ``chat_id``, waiting for it up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for sent in self.files_sent:
                    if sent.chat_id == chat_id:
                        return sent
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no file was sent to chat {chat_id} in {timeout} s")
                self._lock.wait(left)


def _public(file: dict[str, Any]) -> dict[str, Any]:
    """A File object as it appears in a message: without its path (getFile gives that)."""
    return {key: value for key, value in file.items() if key != "file_path"}
