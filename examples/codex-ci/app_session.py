#!/usr/bin/env python3
"""Drives one interactive codex session through `codex app-server` (JSON-RPC on stdio).

Starts a thread in CWD, sends PROMPT as one turn, waits for the turn to complete and stops
the server. Sessions started this way are interactive (codex records them with an
interactive source), unlike `codex exec` ones, which codex's memory pipeline never reads.

Usage: app_session.py CODEX_BIN CWD PROMPT [TIMEOUT_SECONDS]
Prints the thread id.
"""

import json
import subprocess
import sys
import threading
import queue


def main() -> int:
    codex, cwd, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
    proc = subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=cwd,
        text=True,
    )
    messages: "queue.Queue[dict]" = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.strip()
            if line:
                try:
                    messages.put(json.loads(line))
                except ValueError:
                    pass
        messages.put({"eof": True})

    threading.Thread(target=read, daemon=True).start()
    next_id = 0

    def send(message: dict) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def request(method: str, params: dict) -> dict:
        nonlocal next_id
        next_id += 1
        my_id = next_id
        send({"id": my_id, "method": method, "params": params})
        return wait_for(lambda m: m.get("id") == my_id and "method" not in m)

    def wait_for(matches) -> dict:
        while True:
            message = messages.get(timeout=timeout)
            if message.get("eof"):
                raise SystemExit("codex app-server exited early")
            if "method" in message and "id" in message:
                # A request from the server (an approval): decline it.
                send({"id": message["id"], "result": {"decision": "decline"}})
                continue
            if matches(message):
                if "error" in message:
                    raise SystemExit(f"codex app-server error: {message['error']}")
                return message

    try:
        request(
            "initialize",
            {
                "clientInfo": {"name": "agent-memory-ci", "title": None, "version": "0"},
                "capabilities": {"experimentalApi": True, "requestAttestation": False},
            },
        )
        send({"method": "initialized"})
        started = request(
            "thread/start",
            {"cwd": cwd, "approvalPolicy": "never", "sandbox": "read-only"},
        )
        thread_id = started["result"]["thread"]["id"]
        request(
            "turn/start",
            {
                "threadId": thread_id,
                "input": [{"type": "text", "text": prompt, "text_elements": []}],
            },
        )
        wait_for(lambda m: m.get("method") == "turn/completed")
        print(thread_id)
        return 0
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
