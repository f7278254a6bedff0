"""The ``cronjob`` tool's description and schema (no imports: read at every start)."""

CRONJOB_DESCRIPTION = (
    "Schedule work for later or on a schedule, on the user's request ('remind me every "
    "morning at 8 to ...'). action=create with schedule ('every 30m', '2h' for once in two "
    "hours, a cron expression like '0 8 * * *', or an ISO time) and a self-contained prompt "
    "(the job runs later in a fresh session with no memory of this chat); list shows the "
    "jobs; pause, resume and remove take the job's name or id. Results are delivered to this "
    "chat unless deliver says otherwise ('local' keeps them in files)."
)

CRONJOB_PARAMETERS = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["create", "list", "pause", "resume", "remove"]},
        "schedule": {"type": "string", "description": "For create: when it runs."},
        "prompt": {
            "type": "string",
            "description": "For create: the task, complete in itself.",
        },
        "name": {"type": "string", "description": "For create: a short name."},
        "deliver": {
            "type": "string",
            "description": "For create: origin (this chat, the default here), local, or "
            "PLATFORM:CHAT_ID.",
        },
        "job": {"type": "string", "description": "For pause, resume, remove: name or id."},
    },
    "required": ["action"],
}
