#!/usr/bin/env python3
"""A scripted approver for the benchmarks: connects to a gate broker as an approver
tool (hello with the broker's token), watches, and approves every approval request the
moment it arrives. Standard library only.

    bench/auto-approver.py SOCKET
"""
import json
import socket
import sys


def main() -> None:
    path = sys.argv[1]
    with open(path + ".token") as f:
        token = f.read().strip()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    # Buffered reads (a raw socket file would read a line one byte per system call);
    # each message is sent whole with one sendall.
    stream = conn.makefile("rb")

    def send(obj) -> None:
        conn.sendall(json.dumps(obj).encode() + b"\n")

    send({"type": "hello", "version": 1, "role": "approver", "token": token})
    welcome = json.loads(stream.readline())
    if welcome.get("type") != "welcome":
        sys.exit(f"auto-approver: the broker refused: {welcome}")
    send({"type": "watch"})
    for line in stream:
        msg = json.loads(line)
        if msg.get("type") == "request" and msg.get("kind") == "approval":
            send({"type": "decide", "id": msg["id"], "decision": "approve", "remember": False})


if __name__ == "__main__":
    main()
