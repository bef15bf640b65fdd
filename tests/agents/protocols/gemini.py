"""Gemini API (generateContent / streamGenerateContent), as Gemini CLI calls it.

Gemini CLI (with GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL) sends
    POST /v1beta/models/MODEL:streamGenerateContent?alt=sse   the model's turns (SSE)
    POST /v1beta/models/MODEL:generateContent                 side questions (JSON)
    POST /v1beta/models/MODEL:countTokens
A turn whose request declares the shell tool (`run_shell_command`, or the script's
"tool") is answered from the script: a functionCall part running the next command, or
the final text once every command has its functionResponse in `contents`. Side
questions (the next-speaker check, the model router, summaries) are answered with an
object that fits the JSON schema they ask for, or with plain text, and never with a
tool call, so they cannot shift the script.
"""

import json

from fake_model import json_response, next_command, sse_response

SHELL_TOOL = "run_shell_command"


def _declared_tools(body):
    names = []
    for tool in (body or {}).get("tools") or []:
        for decl in tool.get("functionDeclarations") or []:
            names.append(decl.get("name"))
    return names


def tool_results(body):
    """The output of each functionResponse in the conversation, oldest first; None when
    the request is not a model turn."""
    if not isinstance(body, dict) or "contents" not in body:
        return None
    results = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            response = part.get("functionResponse")
            if response is None:
                continue
            value = response.get("response")
            if isinstance(value, dict) and isinstance(value.get("output"), str):
                results.append(value["output"])
            elif isinstance(value, dict) and isinstance(value.get("error"), str):
                results.append(value["error"])
            else:
                results.append(json.dumps(value))
    return results


def _fill(schema):
    """A value that fits a (small) JSON schema: enums take "user" when offered (the
    next-speaker check: the user speaks, the turn ends), else their first choice."""
    if not isinstance(schema, dict):
        return ""
    if "enum" in schema:
        choices = schema["enum"]
        return "user" if "user" in choices else choices[0]
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _fill(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "fake"


def _candidate(parts, usage=True):
    out = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "modelVersion": "fake-gemini",
    }
    if usage:
        out["usageMetadata"] = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return out


def handle(request, script):
    path = request.path.split("?", 1)[0]
    body = request.json or {}
    if path.endswith(":countTokens"):
        return json_response({"totalTokens": 10})
    if request.method == "GET" and "/models" in path:
        return json_response({"models": [{"name": "models/gemini-2.5-flash"}]})
    if not (path.endswith(":streamGenerateContent") or path.endswith(":generateContent")):
        return json_response({"error": {"code": 404, "message": f"fake model: no {path}"}}, 404)
    stream = path.endswith(":streamGenerateContent")
    tool = script.get("tool", SHELL_TOOL)
    if tool in _declared_tools(body):
        command = next_command(script, tool_results(body))
        if command is not None:
            parts = [{"functionCall": {"name": tool, "args": {"command": command}}}]
        else:
            parts = [{"text": script.get("final", "done")}]
    else:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if schema is not None or config.get("responseMimeType") == "application/json":
            parts = [{"text": json.dumps(_fill(schema or {"type": "object"}))}]
        else:
            parts = [{"text": script.get("side_text", "ok")}]
    answer = _candidate(parts)
    if stream:
        return sse_response([(None, answer)])
    return json_response(answer)
