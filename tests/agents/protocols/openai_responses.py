"""OpenAI Responses API over server-sent events (Codex CLI's `wire_api = "responses"`).

A model turn is `POST .../responses` with the conversation in `input`: messages, the
function calls the model made (`type: function_call`, `call_id`) and their results
(`type: function_call_output`, `output`). The answer is a stream: response.created, one
output item (a function call or an assistant message) added and done, response.completed.

Script keys read here, besides `commands` and `final`:
    tool        the function the model calls: "exec_command" (default; arguments
                {"cmd": COMMAND, ...extra}), "shell" ({"command": [..argv]}), or
                "shell_command" ({"command": COMMAND})
    arguments   a list, one object per command: extra arguments merged into that call
                (say {"shell": "sh"} or {"workdir": "/elsewhere"}); a "cmd" or
                "command" key there replaces the command itself
Any other path (GET /models and the like) gets an empty, well-formed answer.
"""

import json
import time

from fake_model import json_response, next_command, sse_response


def _outputs(body):
    if not isinstance(body, dict) or not isinstance(body.get("input"), list):
        return None
    results = []
    for item in body["input"]:
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, list):  # content items
                output = "".join(
                    part.get("text", "") for part in output if isinstance(part, dict)
                )
            results.append(output if isinstance(output, str) else json.dumps(output))
    return results


def tool_results(body):
    if not isinstance(body, dict) or "input" not in body:
        return None
    return _outputs(body)


def _call(script, k, command):
    tool = script.get("tool", "exec_command")
    extra = dict((script.get("arguments") or [{}] * (k + 1))[k] if k < len(script.get("arguments") or []) else {})
    if tool == "exec_command":
        arguments = {"cmd": command}
    elif tool == "shell":
        arguments = {"command": ["bash", "-lc", command]}
    else:
        arguments = {"command": command}
    arguments.update(extra)
    return {
        "type": "function_call",
        "id": f"fc_{k}",
        "call_id": f"call_{k}",
        "name": tool,
        "arguments": json.dumps(arguments),
    }


def _stream(item):
    rid = f"resp_{int(time.time() * 1000)}"
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    return sse_response([
        ("response.created", {"type": "response.created", "response": {"id": rid}}),
        ("response.output_item.added",
         {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done",
         {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed",
         {"type": "response.completed", "response": {"id": rid, "usage": usage}}),
    ])


def handle(request, script):
    body = request.json
    if request.method == "POST" and request.path.rstrip("/").endswith("/responses") and isinstance(body, dict):
        results = _outputs(body) or []
        command = next_command(script, results)
        if command is not None:
            return _stream(_call(script, len(results), command))
        text = script.get("final", "done")
        return _stream({
            "type": "message",
            "role": "assistant",
            "id": "msg_final",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        })
    if request.path.split("?")[0].rstrip("/").endswith("/models"):
        return json_response({"models": [], "data": [], "object": "list"})
    return json_response({})
