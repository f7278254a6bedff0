"""Attachments as the turn's model takes them (see :mod:`hermes_sdk.media`).

When a turn begins, each file the user sent is read once, before the user's message is
stored, so what stands for it is kept with it: audio is transcribed (the installed
transcribers, in ``media.transcribers`` order), a document's text is read, and an image
sent to a model that does not see is described by the auxiliary model. Then, on every
request, a model that sees gets the images themselves (scaled, metadata stripped) and every
other model their text. A message without attachments is sent exactly as before.

Whether a model sees: ``providers.NAME.vision``, then ``model.vision``, then the provider's
own table (:class:`~hermes_sdk.models.SightReporter`); a model nobody vouches for does not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hermes_kernel.engine.models import ModelRoute, response_usages
from hermes_kernel.store.sessions import Usage
from hermes_sdk.media import Attachment, MediaRefused
from hermes_sdk.models import (
    ChatMessage,
    ErrorKind,
    ImagePart,
    ModelRequest,
    ModelUsage,
    ProviderError,
    SightReporter,
)
from hermes_sdk.transcription import Transcriber, TranscriberUnavailable

__all__ = ["MediaSupport", "configured_sight"]

log = logging.getLogger("hermes.media")

DESCRIBE_SECONDS = 120.0
TRANSCRIBE_SECONDS = 300.0
DESCRIBE_INSTRUCTIONS = (
    "You describe images for a model that cannot see them. Describe this image fully and "
    "plainly: what it shows, every piece of text in it word for word, numbers, charts and "
    "their values, and anything unusual. No preamble."
)


def configured_sight(raw: Mapping[str, Any], endpoint: str, model_name: str) -> bool | None:
    """Whether config.yaml says the route's model sees, or None when it does not say:
    ``providers.NAME.vision`` for that endpoint's models, then ``model.vision`` for the
    model ``model.default`` names (not the auxiliary or a fallback model)."""
    providers = raw.get("providers")
    entry = providers.get(endpoint) if isinstance(providers, Mapping) else None
    if isinstance(entry, Mapping) and isinstance(entry.get("vision"), bool):
        return bool(entry["vision"])
    model = raw.get("model")
    if not isinstance(model, Mapping) or not isinstance(model.get("vision"), bool):
        return None
    default = model.get("default")
    if default is not None and str(default) != model_name:
        return None
    return bool(model["vision"])


@dataclass(frozen=True)
class NamedTranscriber:
    name: str
    transcriber: Transcriber


class MediaSupport:
    """One per agent: what every engine of it uses to read attachments."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        transcribers: Callable[[], Sequence[NamedTranscriber]] = tuple,
        describer: Callable[[], ModelRoute | None] = lambda: None,
        pricing: Callable[[str, ModelUsage], float | None] = lambda _model, _usage: None,
    ) -> None:
        self.config = config or {}
        self.transcribers = transcribers
        """The installed transcribers, built on first use, in the order they are asked."""
        self.describer = describer
        """The auxiliary model, for images a text-only model is sent (None: not set)."""
        self.pricing = pricing
        section = self.config.get("media")
        self.section: Mapping[str, Any] = section if isinstance(section, Mapping) else {}
        self._sight: dict[tuple[str, str], bool] = {}

    # --- who sees -------------------------------------------------------------------------

    def sees(self, route: ModelRoute) -> bool:
        key = (route.name, route.model)
        known = self._sight.get(key)
        if known is None:
            known = configured_sight(self.config, route.name, route.model)
            if known is None and isinstance(route.provider, SightReporter):
                try:
                    known = route.provider.sees(route.model)
                except Exception as exc:  # noqa: BLE001 - a provider that cannot say: no
                    log.debug("%s could not say whether it sees: %s", route.name, exc)
            self._sight[key] = known = bool(known)
        return known

    # --- reading, once, when the turn begins ----------------------------------------------

    async def read(
        self,
        attachments: Sequence[Attachment],
        route: ModelRoute,
        notice: Callable[[str], None] | None,
        usages: list[Usage],
    ) -> tuple[Attachment, ...]:
        """The attachments with their text filled in where the model will need it."""
        say = notice or (lambda _line: None)
        sees = self.sees(route)
        done: list[Attachment] = []
        for attachment in attachments:
            try:
                if attachment.text:
                    done.append(attachment)
                elif attachment.kind == "image":
                    done.append(await self._image(attachment, route, sees, say, usages))
                elif attachment.kind == "audio":
                    done.append(await self._audio(attachment, say))
                elif attachment.kind == "document":
                    done.append(await self._document(attachment))
                else:
                    done.append(attachment)
            except Exception as exc:
                log.warning("reading %s failed", attachment.label(), exc_info=True)
                why = " ".join(str(exc).split())[:200] or type(exc).__name__
                say(f"{attachment.label()} could not be read: {why}")
                done.append(attachment.with_text(f"[it could not be read: {why}]"))
        return tuple(done)

    async def _image(
        self,
        image: Attachment,
        route: ModelRoute,
        sees: bool,
        say: Callable[[str], None],
        usages: list[Usage],
    ) -> Attachment:
        try:
            part = await asyncio.to_thread(self.model_image, image)
        except MediaRefused as exc:
            say(str(exc))
            return image.with_text(f"[{exc}]")
        if sees:
            return image
        model = f"{route.name} / {route.model}"
        if self.section.get("images") == "tool":
            say(
                f"{image.label()}: {model} does not see images; it gets where the image is "
                "kept, to look at it with a tool (media.images: tool)"
            )
            return image
        helper = self.describer()
        if helper is None or not self.sees(helper):
            say(
                f"{image.label()}: {model} does not see images and no auxiliary model that does "
                "is set, so it only gets the file's name (set model.vision: true if it sees, "
                "or auxiliary: to a vision model)"
            )
            return image
        try:
            text = await self._describe(helper, part, usages)
        except (ProviderError, TimeoutError) as exc:
            say(f"{image.label()}: the auxiliary model could not describe it: {exc or 'timeout'}")
            return image
        say(
            f"{image.label()}: described by the auxiliary model ({helper.name} / "
            f"{helper.model}), as {model} does not see images"
        )
        return image.with_text(text, f"described by {helper.model}")

    async def _describe(self, helper: ModelRoute, part: ImagePart, usages: list[Usage]) -> str:
        request = ModelRequest(
            model=helper.model,
            messages=[
                ChatMessage("system", DESCRIBE_INSTRUCTIONS),
                ChatMessage("user", "Describe this image.", images=(part,)),
            ],
            max_tokens=1024,
            temperature=0.0,
        )
        async with asyncio.timeout(DESCRIBE_SECONDS):
            response = await helper.provider.complete(request)
        usages.extend(response_usages(helper, response, self.pricing))
        if not response.content.strip():
            raise ProviderError(ErrorKind.BAD_RESPONSE, "it returned an empty description")
        return response.content.strip()

    async def _audio(self, audio: Attachment, say: Callable[[str], None]) -> Attachment:
        why_not: list[str] = []
        # Built on first use: loading their plugins (imports, settings) stays off the loop.
        transcribers = await asyncio.to_thread(self.transcribers)
        for named in transcribers:
            started = time.monotonic()
            try:
                async with asyncio.timeout(TRANSCRIBE_SECONDS):
                    text = await named.transcriber.transcribe(audio)
            except TranscriberUnavailable as exc:
                why_not.append(f"{named.name}: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - one line to the user, the file is kept
                line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                say(f"{audio.label()}: {named.name} could not transcribe it: {line}")
                return audio.with_text(f"[the audio could not be transcribed: {line}]")
            seconds = time.monotonic() - started
            log.info("%s transcribed %s in %.1f s", named.name, audio.label(), seconds)
            return audio.with_text(
                text.strip() or "[no speech heard]", f"transcribed by {named.name}"
            )
        reason = "; ".join(why_not) or "no transcriber is installed (pip install one)"
        say(f"{audio.label()}: not transcribed: {reason}")
        return audio

    async def _document(self, document: Attachment) -> Attachment:
        from hermes_commons.media_read import DOCUMENT_CHARS, document_text

        chars = self.section.get("document_chars")
        limit = chars if isinstance(chars, int) and chars > 0 else DOCUMENT_CHARS
        try:
            text = await asyncio.to_thread(document_text, document, limit)
        except MediaRefused as exc:
            return document.with_text(f"[{exc}]")
        return document.with_text(text, "its text")

    # --- on every request -----------------------------------------------------------------

    def model_image(self, image: Attachment) -> ImagePart:
        from hermes_commons.media_read import IMAGE_MAX_SIDE, model_image

        side = self.section.get("image_max_side")
        return model_image(
            image, max_side=side if isinstance(side, int) and side >= 256 else IMAGE_MAX_SIDE
        )

    def for_route(
        self, route: ModelRoute, messages: Sequence[ChatMessage]
    ) -> Sequence[ChatMessage]:
        """``messages`` as ``route`` can take them: the same list for a model that sees (or
        when no message has images), else each image replaced by a line saying one was
        there (a fallback that does not see took over after the images were prepared)."""
        if not any(message.images for message in messages) or self.sees(route):
            return messages
        note = "[an image was attached here; this model cannot see it]"
        return [
            replace(message, content="\n\n".join(filter(None, [message.content, note])), images=())
            if message.images
            else message
            for message in messages
        ]

    def _fallback(self, attachment: Attachment) -> str:
        if (
            attachment.kind == "image"
            and not attachment.text
            and self.section.get("images") == "tool"
            and attachment.exists()
        ):
            return f"{attachment.heading()} kept at {attachment.path}"
        return attachment.fallback()

    def with_attachments(
        self, message: ChatMessage, attachments: Sequence[Attachment], sees: bool
    ) -> ChatMessage:
        """``message`` as the model gets it: the images themselves for a model that sees
        (while the files are kept), every other file as its text."""
        images: list[ImagePart] = []
        texts: list[str] = []
        for attachment in attachments:
            if sees and attachment.kind == "image" and not attachment.text:
                try:
                    images.append(self.model_image(attachment))
                    continue
                except MediaRefused as exc:
                    texts.append(f"{attachment.heading()} [{exc}]")
                    continue
            texts.append(self._fallback(attachment))
        content = "\n\n".join(part for part in (message.content, *texts) if part)
        return replace(message, content=content, images=tuple(images))
