#!/usr/bin/env python3
"""A minimal MCP client over stdio, standard library only: starts `fnbox mcp` as an MCP host would (the
command and arguments of config.json beside this file), initializes, lists the tools, runs Python code,
keeps state in a kernel across two calls, and writes then reads a session file.

    python3 examples/mcp/client.py                 # the command config.json names (after `make install`)
    FNBOX_BIN=./build/fnbox python3 examples/mcp/client.py
"""
import json
import os
import subprocess
from pathlib import Path

server = json.loads((Path(__file__).parent / "config.json").read_text())["mcpServers"]["fnbox"]
command = [os.environ.get("FNBOX_BIN") or server["command"], *server["args"]]
proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
next_id = 0


def rpc(method, params=None):
    """Send one request and return its result (messages are one JSON object per line)."""
    global next_id
    next_id += 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params or {}}) + "\n")
    proc.stdin.flush()
    while True:
        msg = json.loads(proc.stdout.readline())
        if msg.get("id") == next_id:
            if "error" in msg:
                raise RuntimeError(msg["error"])
            return msg["result"]


def tool(name, **arguments):
    return rpc("tools/call", {"name": name, "arguments": arguments})["structuredContent"]


init = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "fnbox-example", "version": "1"}})
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
print("server:", init["serverInfo"]["name"])
print("tools:", ", ".join(sorted(t["name"] for t in rpc("tools/list")["tools"])))
print("run_code:", tool("run_code", language="python", code="print(sum(range(10)))")["stdout"].strip())
tool("run_in_kernel", code="seen = ['a', 'b']")
print("kernel:", tool("run_in_kernel", code="len(seen)")["result"])
tool("write_file", path="notes.txt", content="kept for this client's session\n")
print("cat:", tool("exec_command", command="cat notes.txt")["stdout"].strip())
proc.stdin.close()
proc.wait(timeout=30)
