#!/usr/bin/env python3
"""Load and timing clients for bench/broker.sh (Python standard library only).

  broker-client.py hold SOCKET COUNT PID [--threads]
      Open COUNT requester connections at once, each with one approval_request, wait
      until the broker lists them all (or, with --threads, until process PID has COUNT
      more threads: the thread-per-connection model has no approver side), print the
      memory of PID, then time a few approvals while the COUNT requests keep waiting,
      then close everything and check that the broker settled them all.

Figures are printed as `name: value` lines.
"""

import json
import os
import resource
import socket
import statistics
import sys
import threading
import time

WAIT = 60.0


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


def request_line(call_id, command, session="bench"):
    return (
        json.dumps(
            {
                "type": "approval_request",
                "version": 1,
                "call_id": call_id,
                "session_id": session,
                "command": command,
                "work_dir": "/bench",
                "level": "ask",
                "timeout_seconds": 600,
                "remember_supported": True,
                "pid": os.getpid(),
            }
        )
        + "\n"
    ).encode()


class Approver:
    def __init__(self, path):
        token = open(path + ".token").read().strip()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.send({"type": "hello", "version": 1, "role": "approver", "token": token})
        reply = self.recv()
        if reply.get("type") != "welcome":
            sys.exit(f"broker-client: no welcome: {reply}")

    def send(self, message):
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def recv(self):
        line = self.file.readline()
        if not line:
            return None
        return json.loads(line)

    def count(self):
        self.send({"type": "list"})
        header = self.recv()
        for _ in range(header["count"]):
            self.recv()
        return header["count"]


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def wait_until(what, check):
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            sys.exit(f"broker-client: timed out waiting for {what}")
        time.sleep(0.005)


def round_trips(path, runs=300):
    """Median and p95 of request -> decision, with a watcher that approves each request
    whose command starts with "rt "."""
    watcher = Approver(path)
    watcher.send({"type": "watch"})

    def approve_rt():
        while True:
            event = watcher.recv()
            if event is None:
                return
            if event.get("type") == "request" and event["command"].startswith("rt "):
                watcher.send({"type": "decide", "id": event["id"], "decision": "approve"})

    threading.Thread(target=approve_rt, daemon=True).start()
    times = []
    for i in range(runs):
        t0 = time.perf_counter()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(request_line(f"rt-{os.getpid()}-{len(times)}-{i}", f"rt {i}"))
        reply = s.makefile("rb").readline()
        times.append(time.perf_counter() - t0)
        s.close()
        if json.loads(reply).get("decision") != "approve":
            sys.exit(f"broker-client: round trip {i}: {reply!r}")
    watcher.sock.shutdown(socket.SHUT_RDWR)
    times = sorted(times[20:])
    return statistics.median(times) * 1e6, times[int(len(times) * 0.95)] * 1e6


def hold(path, count, pid, threads_model):
    raise_fd_limit(count + 64)
    name = "model" if threads_model else "broker"
    if not threads_model:
        median, p95 = round_trips(path)
        print(
            "raw approval round trip, nothing else pending (requester -> broker -> "
            f"watcher -> broker -> requester): median {median:.0f} us, p95 {p95:.0f} us"
        )
    base_threads = int(memory(pid)["Threads"])
    start = time.monotonic()
    conns = []
    for i in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(request_line(f"hold-{i}", f"make target-{i}"))
        conns.append(s)
    if threads_model:
        wait_until(
            f"{count} threads",
            lambda: int(memory(pid)["Threads"]) >= base_threads + count,
        )
    else:
        approver = Approver(path)
        wait_until(f"{count} pending requests", lambda: approver.count() >= count)
    elapsed = time.monotonic() - start
    status = memory(pid)
    print(f"pending: {count}")
    print(f"time to open and register them: {elapsed * 1000:.0f} ms")
    print(f"{name} VmRSS with them pending: {status['VmRSS']}")
    print(f"{name} VmHWM (peak RSS): {status['VmHWM']}")
    print(f"{name} threads: {status['Threads']}")
    if threads_model:
        for s in conns:
            s.close()
        return

    median, p95 = round_trips(path)
    print(
        f"raw approval round trip with {count} pending: median {median:.0f} us, "
        f"p95 {p95:.0f} us"
    )
    for s in conns:
        s.close()
    wait_until("the closed requests to settle", lambda: approver.count() == 0)
    print(f"after the {count} requesters closed: 0 pending, VmRSS {memory(pid)['VmRSS']}")


def main(argv):
    if len(argv) >= 4 and argv[0] == "hold":
        hold(argv[1], int(argv[2]), int(argv[3]), "--threads" in argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
