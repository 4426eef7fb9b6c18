#!/usr/bin/env python3
"""The Python client in a few lines: a call, a session with files and a command, a kernel.

Install the client first (docs/guide/install.md), or run with PYTHONPATH=clients/python. The client finds
fnbox through $FNBOX_BIN, then `fnbox` on PATH; with FNBOX_URL set it talks to that server instead.
"""
import os

import fnbox

remote = {"base_url": os.environ["FNBOX_URL"]} if os.environ.get("FNBOX_URL") else {}

# one call, one fresh sandbox
r = fnbox.call({"language": "javascript", "code": "const add = (a, b) => a + b", "args": [1, 2]}, **remote)
print("call:", r["status"], r["result"])

# a session: files, commands, code and kernels in one sandbox that lives until the block ends
with fnbox.Sandbox(**remote) as sb:
    sb.files.write("in.txt", b"hello")
    print("command:", sb.commands.run("wc -c < in.txt").stdout.strip())
    sb.run_code("total = 40", kernel=True)
    print("kernel:", sb.run_code("total + 2", kernel=True).result)
