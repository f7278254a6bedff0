"""What a ``/NAME`` command answers: the text to show, and what the front-end must do about
it. The runtime runs every command (the built-in ones and the plugins') once, for every
front-end; a front-end only shows ``text`` and acts on the fields that ask it to.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SlashReply", "opens_session"]

_KEPT_FOR_SESSION = {
    "goal": {"", "status", "pause", "resume", "clear"},
    "personality": {"", "none", "default", "off"},
    "background": {""},
    "bg": {""},
}


def opens_session(name: str, args: str) -> bool:
    """Whether the runtime's ``/NAME args`` keeps something for the session (a goal, a
    personality, a task's parent conversation): a front-end with no session yet opens it
    first, with its own options (its tools), and leaves none behind for the other words."""
    ignored = _KEPT_FOR_SESSION.get(name)
    return ignored is not None and args.strip().lower() not in ignored


@dataclass(frozen=True, slots=True)
class SlashReply:
    """A command's answer. ``str(reply)`` is its text, so a front-end written when commands
    answered with text alone keeps working."""

    text: str = ""
    new_session: bool = False
    """The session is over for this front-end: its next message opens a new one."""
    reload: bool = False
    """The session's transcript changed (``/undo``, ``/compact``): show it again."""
    taken_back: str | None = None
    """``/undo``: the words of the user's message that was taken back (to send again)."""
    provider: str | None = None
    model: str | None = None
    """The model the session (or, without one, the next session) uses from now on, when the
    command changed it: a front-end opening a session later opens it with this one."""
    yolo: bool | None = None
    """Asking before dangerous commands was turned off (True) or on again (False)."""
    stopped: bool = False
    """The running turn was asked to stop."""
    send: str | None = None
    """A message for the front-end to send as the user's (``/queue``, ``/goal``): at once
    if no turn runs on the session, else when the running one ends, without interrupting
    it."""
    session_id: str | None = None
    """Go on in this session from now on (``/branch`` made it): the front-end switches to
    it as it would on ``/resume``."""
    turn_provider: str | None = None
    turn_model: str | None = None
    """The session's next turn (the one ``send`` starts) uses this endpoint and model (None:
    its default), then the session's own again (``/moa``). The runtime keeps it: a
    front-end only sends ``send`` as it always does; one with no session yet gets it on
    the session it opens next for the same person."""

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return (
            bool(self.text)
            or self.new_session
            or self.reload
            or self.stopped
            or self.send is not None
            or self.session_id is not None
        )
