#!/usr/bin/env python3
"""A legacy, blocking MCP server over stdio, written with the Python standard library only.

It knows nothing of tasks: `build_report` simply takes as long as it takes. taskgate in front of
it (config/recipes/retrofit-python.yaml) gives its clients tasks. Newline-delimited JSON-RPC on
stdin/stdout (MCP stdio transport); every tools/call runs on a thread of its own, since taskgate
sends the calls of all its clients over this one connection.
"""
import json
import sys
import threading
import time

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
TOOLS = [{
    "name": "build_report",
    "description": "Builds a report; takes the given seconds, reporting progress every second.",
    "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}}, "required": ["seconds"]},
}]
write_lock = threading.Lock()
cancelled = set()


def send(message):
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def build_report(request_id, args, progress_token):
    seconds = float(args.get("seconds", 0))
    started = time.monotonic()
    step = 0
    while time.monotonic() - started < seconds:
        if request_id in cancelled:
            return  # the client cancelled: no answer is sent (MCP cancellation)
        time.sleep(min(1.0, max(0.0, seconds - (time.monotonic() - started))))
        step += 1
        if progress_token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": progress_token, "progress": step, "message": f"Report {min(step, seconds):g}s of {seconds:g}s"}})
    text = f"Report ready after {seconds:g} s"
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})


def handle(message):
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if request_id is None:  # a notification
        if method == "notifications/cancelled":
            cancelled.add(params.get("requestId"))
        return
    if method == "initialize":
        asked = params.get("protocolVersion")
        result = {"protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "python-report-server", "version": "1.0.0"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "build_report":
        token = (params.get("_meta") or {}).get("progressToken")
        threading.Thread(target=build_report, args=(request_id, params.get("arguments") or {}, token), daemon=True).start()
        return
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


for line in sys.stdin:
    if line.strip():
        try:
            handle(json.loads(line))
        except (ValueError, AttributeError) as err:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {err}"}})
