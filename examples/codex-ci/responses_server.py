#!/usr/bin/env python3
"""A loopback Responses-API server for driving the real codex offline.

Answers every `POST .../responses` with a short SSE stream (one assistant message, then
`response.completed`) and appends each request body, as one JSON line, to the log file.
A request that asks for structured output (codex's memory extraction) gets the empty
no-op answer, so codex's own memory generation never writes anything.

Usage: responses_server.py LOG_FILE PORT_FILE
The chosen port is written to PORT_FILE once the server listens.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY_TEXT = "Done."
NO_OP_EXTRACTION = {"rollout_summary": "", "rollout_slug": "", "raw_memory": ""}
LOG_LOCK = threading.Lock()


def sse(event: dict) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def wants_structured_output(body: dict) -> bool:
    text = body.get("text")
    return isinstance(text, dict) and isinstance(text.get("format"), dict) and (
        text["format"].get("type") == "json_schema"
    )


class Handler(BaseHTTPRequestHandler):
    log_path = ""
    counter = 0

    def log_message(self, format, *args):  # keep stderr quiet
        pass

    def do_GET(self):
        # codex may ask for the model list; an empty list keeps its defaults.
        payload = json.dumps({"data": [], "models": []}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with LOG_LOCK:
            Handler.counter += 1
            number = Handler.counter
            with open(Handler.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if not self.path.rstrip("/").endswith("/responses"):
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        text = json.dumps(NO_OP_EXTRACTION) if wants_structured_output(body) else REPLY_TEXT
        response_id = f"resp_{number}"
        events = [
            {"type": "response.created", "response": {"id": response_id}},
            {
                "type": "response.output_item.done",
                "item": {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{number}",
                    "content": [{"type": "output_text", "text": text}],
                },
            },
            {
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "usage": {
                        "input_tokens": 10,
                        "input_tokens_details": None,
                        "output_tokens": 2,
                        "output_tokens_details": None,
                        "total_tokens": 12,
                    },
                },
            },
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(sse(event))
        self.wfile.flush()


def main() -> None:
    log_path, port_path = sys.argv[1], sys.argv[2]
    Handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_path, "w", encoding="utf-8") as port_file:
        port_file.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
