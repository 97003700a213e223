"""A loopback server that speaks enough of Anthropic's Messages API for Claude Code.

Claude Code sends every model call as `POST /v1/messages` with `stream: true` and reads the
answer as server-sent events. This server logs each request body, asks a `respond(body)`
function for the answer's content blocks, and streams them back. The function plays the model:
it reads the request and answers deterministically.

A content block is `{"type": "text", "text": ...}` or
`{"type": "tool_use", "name": ..., "input": {...}}` (the id is made here).
"""

import http.server
import itertools
import json
import threading


class MessagesApi:
    def __init__(self, respond, log_path):
        self.respond = respond
        self.log_path = log_path
        self.requests = []
        self.errors = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                api._answer(self)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self):
        host, port = self._server.server_address
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, handler):
        length = int(handler.headers.get("content-length", "0"))
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            number = next(self._ids)
            self.requests.append(body)
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"n": number, "path": handler.path, "body": body}) + "\n")
            try:
                blocks = self.respond(body)
            except (Exception, SystemExit) as error:  # the script's failure: report, answer 500
                self.errors.append(f"request {number}: {error!r}")
                handler.send_error(500, str(error))
                return
        if handler.path.split("?")[0] != "/v1/messages" or not body.get("stream"):
            self.errors.append(f"request {number}: unexpected {handler.path} without stream")
        self._stream(handler, f"msg_ci_{number:04d}", body.get("model", "claude-ci"), blocks)

    def _stream(self, handler, message_id, model, blocks):
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()

        def event(name, data):
            data = {"type": name, **data}
            handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        usage = {
            "input_tokens": 1200,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        event(
            "message_start",
            {
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
            },
        )
        stop_reason = "end_turn"
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                stop_reason = "tool_use"
                start = {
                    "type": "tool_use",
                    "id": f"toolu_ci_{message_id[-4:]}_{index}",
                    "name": block["name"],
                    "input": {},
                }
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            event("content_block_start", {"index": index, "content_block": start})
            event("content_block_delta", {"index": index, "delta": delta})
            event("content_block_stop", {"index": index})
        event(
            "message_delta",
            {"delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 40}},
        )
        event("message_stop", {})
        handler.wfile.flush()
