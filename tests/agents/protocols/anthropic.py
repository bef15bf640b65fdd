"""Anthropic Messages API, as Claude Code uses it (see ../fake_model.py).

A model turn is a POST to /v1/messages whose `tools` include the script's tool (default
`Bash`): it is answered with a `tool_use` block that runs the next command, input
{"command": ...}, or with the final text once every command has its result. Streamed
(`"stream": true`) as server-sent events: message_start, content_block_start,
input_json_delta (or text_delta), content_block_stop, message_delta with the stop
reason, message_stop; otherwise as one JSON message.

Everything else Claude Code sends is answered so that it goes on: a request without
the tool (a session title, a summary, a quota probe) gets a short text; count_tokens a
count; any other path an empty JSON object.

Tool results arrive as content blocks of type `tool_result` in user messages; their
`content` is a string or a list of text blocks.
"""

import json

from fake_model import json_response, next_command, sse_response


def tool_results(body):
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    results = []
    for message in body["messages"]:
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(_text_of(block.get("content")))
    return results


def _text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return "" if content is None else json.dumps(content)


def _is_model_turn(body, tool):
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("name") == tool for t in tools)


def handle(request, script):
    path = request.path.split("?")[0]
    body = request.json if isinstance(request.json, dict) else {}
    if path.endswith("/count_tokens"):
        return json_response({"input_tokens": 100})
    if not path.endswith("/v1/messages") or request.method != "POST":
        return json_response({})
    tool = script.get("tool", "Bash")
    model = body.get("model", "claude-fake")
    if _is_model_turn(body, tool):
        command = next_command(script, tool_results(body))
        turn = len(tool_results(body) or [])
    else:
        command, turn = None, None
    if command is not None:
        block = {"type": "tool_use", "id": f"toolu_fake_{turn:03d}", "name": tool, "input": {}}
        payload = {"command": command}
        if script.get("description", True):
            payload["description"] = "run a scripted command"
        stop = "tool_use"
    else:
        text = script.get("final", "done") if turn is not None else script.get("side_text", "Scripted session")
        block = {"type": "text", "text": ""}
        payload = text
        stop = "end_turn"
    message = {
        "id": f"msg_fake_{turn if turn is not None else 'side'}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if not body.get("stream"):
        done = dict(block)
        if block["type"] == "tool_use":
            done["input"] = payload
        else:
            done["text"] = payload
        return json_response(dict(message, content=[done], stop_reason=stop))
    if block["type"] == "tool_use":
        delta = {"type": "input_json_delta", "partial_json": json.dumps(payload)}
    else:
        delta = {"type": "text_delta", "text": payload}
    return sse_response([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        }),
        ("message_stop", {"type": "message_stop"}),
    ])
