"""``vision_analyze(image, question)``: a model that sees (the auxiliary model) looks at an
image for a session's model that does not, and answers its question.

For sessions whose model is text only, with ``media.images: tool``: each image the user
sends then reaches the model as the place it is kept, and the model asks about it as it
needs, instead of getting one description up front. The toolset ``vision`` is opt-in
(``agent.add_toolsets: [vision]``), so its schema costs other sessions nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ToolsetSpec, ToolSpec, hookimpl

TOOLSET = "vision"


async def _analyze(image: str, question: str, *, context: Any) -> str:
    from hermes_plugin_toolset_vision.analyze import vision_analyze

    return await vision_analyze(image, question, context=context)


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(
        name=TOOLSET, description="look at images with a model that sees", opt_in=True
    )


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="vision_analyze",
        description="Look at an image and answer a question about it (what it shows, the "
        "text in it, a chart's values). `image` is where an image the user sent is kept (the "
        "path after 'kept at' in their message), or an http(s) URL.",
        handler=_analyze,
        parameters={
            "type": "object",
            "properties": {
                "image": {"type": "string", "description": "the kept image's path, or a URL"},
                "question": {"type": "string", "description": "what to find out"},
            },
            "required": ["image", "question"],
        },
        toolset=TOOLSET,
        parallel_safe=True,
        takes_context=True,
    )
