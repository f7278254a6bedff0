#!/usr/bin/env python3
"""Print one instant in several time zones.

usage: tz_table.py WHEN ZONE [ZONE ...]
WHEN is an ISO date-time; without an offset it is read in the first ZONE.
"""

import sys
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    zones = []
    for name in argv[1:]:
        try:
            zones.append(ZoneInfo(name))
        except (ZoneInfoNotFoundError, ValueError):
            print(
                f"unknown time zone {name!r}: use an IANA name such as Europe/Paris",
                file=sys.stderr,
            )
            return 2
    try:
        when = datetime.fromisoformat(argv[0])
    except ValueError:
        print(f"{argv[0]!r} is not an ISO date-time such as 2026-03-30T15:00", file=sys.stderr)
        return 2
    if when.tzinfo is None:
        when = when.replace(tzinfo=zones[0])
    for zone in zones:
        local = when.astimezone(zone)
        print(f"{zone.key:24} {local:%a %Y-%m-%d %H:%M} (UTC{local:%z})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
