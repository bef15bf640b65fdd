"""OpenAI chat completions (`POST …/chat/completions`, streaming SSE or one JSON body),
as Qwen Code and Aider speak it.

Two ways of running a command, chosen by the request:

- the request offers a tool named `run_shell_command` (Qwen Code): the model answers
  with a tool call `{"command": CMD}`, and the command's result comes back as a message
  of role `tool`;
- no such tool (Aider, which has no tool calls): the model answers with CMD in a
  ```bash fenced block. Aider asks "Run shell command?", runs it, asks "Add command
  output to the chat?", and puts what it ran into the next request as a user message
  `Output from CMD\\nOUTPUT` (aider/coders/base_coder.py, handle_shell_commands).

The script may add `"tool": NAME` for another tool name, `"arguments"`: a list, one
object per command, of extra arguments merged into that command's tool call (say
{"directory": "/elsewhere"} for Qwen Code's `run_shell_command`), and `"final"`: the
text of the last answer. Also answered: `GET …/models` (a list with the requested model).
"""

import json
import time

from fake_model import json_response, next_command, sse_response

SHELL_TOOL = "run_shell_command"
AIDER_OUTPUT = "Output from "


def _text(content):
    """A message's content as text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def tool_results(body):
    """What the model saw of each command so far, in order; None when `body` is not a
    chat request."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    results = []
    for message in body["messages"]:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "tool":
            results.append(text)
        elif role == "user" and text.startswith(AIDER_OUTPUT):
            results.append(text)
    return results


def _tool_names(body):
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _answer(body, script):
    """(content, tool_calls) of the next model turn."""
    command = next_command(script, tool_results(body))
    if command is None:
        return script.get("final", "Done."), None
    tool = script.get("tool", SHELL_TOOL)
    if tool in _tool_names(body):
        n = len(tool_results(body))
        arguments = {"command": command}
        extra = script.get("arguments") or []
        if n < len(extra):
            arguments.update(extra[n])
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(arguments)},
        }
        return None, [call]
    return f"Run this:\n\n```bash\n{command}\n```\n", None


def handle(request, script):
    path = request.path.split("?", 1)[0].rstrip("/")
    if request.method == "GET" and path.endswith("/models"):
        model = script.get("model", "fake-model")
        return json_response({"object": "list", "data": [{"id": model, "object": "model"}]})
    if request.method != "POST" or not path.endswith("/chat/completions"):
        return json_response({"error": {"message": f"no such endpoint {request.path}"}}, 404)
    body = request.json or {}
    model = body.get("model") or "fake-model"
    content, calls = _answer(body, script)
    created = int(time.time())
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    finish = "tool_calls" if calls else "stop"
    if not body.get("stream"):
        message = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return json_response({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        })

    def chunk(delta, finish_reason=None, with_usage=False):
        data = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if with_usage:
            data["usage"] = usage
        return (None, data)

    events = [chunk({"role": "assistant", "content": ""})]
    if calls:
        for i, call in enumerate(calls):
            events.append(chunk({"tool_calls": [dict(call, index=i)]}))
    else:
        events.append(chunk({"content": content}))
    events.append(chunk({}, finish, with_usage=True))
    events.append((None, "[DONE]"))
    return sse_response(events)
