import asyncio
import contextlib
from pathlib import Path

from hermes_plugin_inbox import Inbox

from hermes_sdk.runtime import open_runtime
from hermes_testkit import FrontendTests


class FolderClient:
    """Uses the inbox the way its users do: files in, files out."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.approve = False
        self.questions: list[str] = []  # a folder cannot ask anyone
        self.sent = 0

    async def send(self, text: str) -> str:
        self.sent += 1
        name = f"message-{self.sent}"
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{name}.txt").write_text(text, encoding="utf-8")
        reply = self.folder / f"{name}.reply.txt"
        while not reply.exists():
            await asyncio.sleep(0.05)
        return reply.read_text(encoding="utf-8")

    async def stop(self) -> None:
        (self.folder / "STOP").touch()


class TestInbox(FrontendTests):
    answers_questions = False

    @contextlib.asynccontextmanager
    async def connect(self, home):
        inbox = Inbox(home / "inbox", poll_seconds=0.05)
        async with open_runtime(home) as runtime:
            serving = asyncio.ensure_future(inbox.run(runtime))
            try:
                yield FolderClient(home / "inbox")
            finally:
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await serving
