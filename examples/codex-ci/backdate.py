#!/usr/bin/env python3
"""Moves codex sessions back in time, as if HOURS had passed since they ended.

Rewrites the `timestamp` of every line of each rollout under CODEX_HOME/sessions, and the
matching times of codex's own thread rows (state_5.sqlite), so both agent-memory's idle rule
and codex's see sessions that ended HOURS ago. Only the clock moves; no content changes.

Usage: backdate.py CODEX_HOME HOURS
"""

import datetime as dt
import json
import pathlib
import sqlite3
import sys


def shift(stamp: str, delta: dt.timedelta) -> str:
    parsed = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")) - delta
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z"


def main() -> None:
    home = pathlib.Path(sys.argv[1])
    delta = dt.timedelta(hours=float(sys.argv[2]))
    for path in sorted((home / "sessions").rglob("*.jsonl")):
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if isinstance(item.get("timestamp"), str):
                item["timestamp"] = shift(item["timestamp"], delta)
            lines.append(json.dumps(item, separators=(",", ":")))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seconds = int(delta.total_seconds())
    db = sqlite3.connect(home / "state_5.sqlite")
    with db:
        db.execute(
            "UPDATE threads SET created_at = created_at - ?1, updated_at = updated_at - ?1,"
            " created_at_ms = created_at_ms - ?1 * 1000, updated_at_ms = updated_at_ms - ?1 * 1000",
            (seconds,),
        )
    db.close()


if __name__ == "__main__":
    main()
