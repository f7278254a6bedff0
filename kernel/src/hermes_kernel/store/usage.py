"""Usage summed by day, for reports over months (``hermes insights``): model calls by day,
source, provider and model, and tool calls by day and tool. Days are local days.

Sessions imported with totals only count on the day they started, and as no model call: the
importer records their totals as one record made at the session's start (no call is answered
before its session exists), and sessions stored before calls were recorded one by one have
none. An imported tool result carries no disposition: the other tool ran the call and kept
its result, so it does not count as failed (a live one always carries one)."""

from __future__ import annotations

from typing import Any

from hermes_kernel.store.backend import StoreBackend

__all__ = ["tool_usage_by_day", "usage_by_day"]


def _queries(db: StoreBackend) -> tuple[str, str, str]:
    model_calls = f"""
SELECT {db.local_day("c.created_at")}, s.source, c.provider, c.model,
       sum(CASE WHEN c.message_id IS NOT NULL OR c.created_at <> s.started_at THEN 1 ELSE 0 END),
       count(DISTINCT s.id), sum(c.input_tokens), sum(c.output_tokens),
       sum(c.cache_read_tokens), sum(coalesce(c.cost_usd, 0)),
       sum(CASE WHEN c.cost_usd IS NULL THEN 1 ELSE 0 END)
FROM model_calls c JOIN sessions s ON s.id = c.session_id
WHERE c.created_at >= ?
GROUP BY 1, 2, 3, 4
"""
    session_totals = f"""
SELECT {db.local_day("s.started_at")}, s.source, s.provider, s.model, 0, count(*),
       sum(s.input_tokens), sum(s.output_tokens), sum(s.cache_read_tokens),
       sum(s.estimated_cost_usd), sum(s.unpriced_calls)
FROM sessions s
WHERE s.started_at >= ? AND s.input_tokens + s.output_tokens > 0
  AND NOT EXISTS (SELECT 1 FROM model_calls c WHERE c.session_id = s.id)
GROUP BY 1, 2, 3, 4
"""
    tools = f"""
SELECT day, tool, count(*), sum(failed) FROM (
  SELECT {db.local_day("created_at")} AS day, tool_name AS tool,
         CASE WHEN coalesce(disposition, 'ok') <> 'ok' THEN 1 ELSE 0 END AS failed
  FROM messages WHERE role = 'tool' AND tool_name IS NOT NULL AND created_at >= ?
  UNION ALL
  SELECT {db.local_day("created_at")}, tool_name,
         CASE WHEN coalesce(disposition, 'unknown') <> 'ok' THEN 1 ELSE 0 END
  FROM nested_calls WHERE created_at >= ?
) AS calls
GROUP BY day, tool ORDER BY day, tool
"""
    return model_calls, session_totals, tools


_FIELDS = (
    "day",
    "source",
    "provider",
    "model",
    "model_calls",
    "sessions",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cost_usd",
    "unpriced_calls",
)


def usage_by_day(db: StoreBackend, since: float) -> list[dict[str, Any]]:
    model_calls, session_totals, _tools = _queries(db)
    rows = db.query(model_calls, (since,)) + db.query(session_totals, (since,))
    found = [dict(zip(_FIELDS, row, strict=True)) for row in rows]
    for row in found:
        for key in _FIELDS[4:]:
            row[key] = (float if key == "cost_usd" else int)(row[key] or 0)
    return sorted(found, key=lambda row: (row["day"], row["source"], str(row["model"])))


def tool_usage_by_day(db: StoreBackend, since: float) -> list[dict[str, Any]]:
    return [
        {"day": day, "tool": tool, "calls": int(calls), "failed": int(failed or 0)}
        for day, tool, calls, failed in db.query(_queries(db)[2], (since, since))
    ]
