#!/usr/bin/env python3
"""A scripted stand-in for a model provider, for the real-agent tests.

    fake_model.py --protocol NAME --script FILE --record FILE

Listens on 127.0.0.1 (a free port), prints `PORT <n>` on stdout once it accepts, and
answers the agent's model requests from the script, a JSON object:

    {"commands": ["ls", "touch x"], "final": "done", ...}

plus whatever the protocol module reads (the tool name, say). A model turn answers with
a tool call that runs commands[k], where k is the number of tool results the request's
conversation already holds; once every command has a result it answers with the final
text. Deciding from the conversation, not from a counter, keeps retries and side
requests (titles, token counts) from shifting the script.

Every request is appended to the record file as one JSON line, with the tool results the
protocol found in it: {"method", "path", "body", "tool_results"}. The tool results are
what the model saw; the tests judge by them and by side effects.

The protocols live in protocols/NAME.py; each defines
    handle(request: Request, script: dict) -> Response
    tool_results(body) -> list[str] | None   (None: not a model turn)
"""

import argparse
import importlib.util
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))


class Request:
    def __init__(self, method, path, headers, raw):
        self.method = method
        self.path = path
        self.headers = headers
        self.raw = raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None


class Response:
    def __init__(self, status=200, content_type="application/json", chunks=(), headers=None):
        self.status = status
        self.content_type = content_type
        self.chunks = list(chunks)
        self.headers = headers or {}


def json_response(obj, status=200):
    return Response(status, "application/json", [json.dumps(obj).encode()])


def sse_response(events):
    """events: (event name or None, JSON-able data) pairs, sent as server-sent events."""
    chunks = []
    for name, data in events:
        text = "" if name is None else f"event: {name}\n"
        payload = data if isinstance(data, str) else json.dumps(data)
        chunks.append((text + f"data: {payload}\n\n").encode())
    return Response(200, "text/event-stream", chunks)


def next_command(script, results):
    """The command the model runs next, or None when every command has its result."""
    commands = script.get("commands", [])
    done = len(results or [])
    return commands[done] if done < len(commands) else None


def load_protocol(name):
    path = os.path.join(HERE, "protocols", name + ".py")
    spec = importlib.util.spec_from_file_location("protocol_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--record", required=True)
    args = parser.parse_args()
    protocol = load_protocol(args.protocol)
    with open(args.script) as f:
        script = json.load(f)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def serve(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = Request(self.command, self.path, dict(self.headers), raw)
            try:
                results = protocol.tool_results(request.json) if request.json is not None else None
                response = protocol.handle(request, script)
            except Exception as e:  # a broken script must show, not hang the agent
                results = None
                response = json_response({"error": {"message": f"fake model: {e!r}"}}, 500)
            with lock, open(args.record, "a") as f:
                f.write(json.dumps({
                    "method": self.command,
                    "path": self.path,
                    "body": request.json if request.json is not None else raw.decode("utf-8", "replace"),
                    "tool_results": results,
                }) + "\n")
            body = b"".join(response.chunks)
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
