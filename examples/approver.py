#!/usr/bin/env python3
"""A reference approver for gate, in Python's standard library only.

At level "ask", gate sends every command that no allow rule covers to an approver on a
Unix socket, and runs it only if the approver answers "approve". This program is such
an approver. It approves the commands that start with one of the prefixes you give it
and denies everything else with a message that tells the model what it may run.

    python3 examples/approver.py --socket "$XDG_RUNTIME_DIR/approver/approver.sock" \\
        --allow-prefix 'make test' --allow-prefix 'git status' [--remember]

Then point gate at the socket with GATE_SOCKET, --socket or `approval.socket` in
~/.config/gate/config.toml.

docs/protocol.md describes the protocol. To build your own approver, copy this file and
change decide(): ask a person in your UI, consult your agent host, keep a log.
"""

import argparse
import errno
import json
import os
import signal
import socket
import stat
import struct
import sys
import threading

# The longest line either side may send, newline included.
MAX_LINE = 64 * 1024

# gate waits for the answer for `timeout_seconds` (60 by default). An approver that
# asks a person can take that long. This one answers at once, so a connection that sends
# no complete request within a few seconds is dropped.
READ_TIMEOUT_SECONDS = 10

# A command with any of these characters never matches a prefix: with them a command
# that starts with an approved prefix could go on to run something else
# (`make test; rm -rf ~`). gate's own allow rules use the same list.
SHELL_CHARACTERS = set(";&|<>$`(){}\\\n")


def is_control(ch):
    """Control characters (C0, DEL, C1) other than tab: the carriage return, escape..."""
    code = ord(ch)
    return ch != "\t" and (code < 0x20 or 0x7F <= code <= 0x9F)


def shell_syntax_in(text):
    """The first character of `text` that rules out a prefix match, or None."""
    for ch in text:
        if ch in SHELL_CHARACTERS or is_control(ch):
            return ch
    return None


def trim(text):
    """gate trims spaces and tabs, and nothing else, from both ends."""
    return text.strip(" \t")


def matches(command, prefix):
    """The matching rule of gate's allow rules: the trimmed command equals the prefix,
    or starts with the prefix followed by a space."""
    command = trim(command)
    return command == prefix or command.startswith(prefix + " ")


def shown(text):
    """A command or character as it can be quoted in a one-line message."""
    return json.dumps(text)[1:-1]


class Memory:
    """With --remember: the commands this approver approved, per session, so that it
    approves the same command again without looking at it. gate keeps no remembered
    approvals itself (a file it kept could be written by the commands it runs), so an
    approver that wants them keeps them, in memory nothing else can write."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sessions = {}

    @staticmethod
    def exact(request):
        # An interactive shell has no command text; U+FFFD stands for bytes that were
        # not UTF-8, so two different commands can read the same.
        return request.get("kind") != "session" and "\ufffd" not in request["command"]

    def covers(self, request):
        with self.lock:
            commands = self.sessions.get(request.get("session_id"), set())
            return self.exact(request) and trim(request["command"]) in commands

    def add(self, request):
        if self.exact(request):
            with self.lock:
                commands = self.sessions.setdefault(request.get("session_id"), set())
                commands.add(trim(request["command"]))


def decide(request, prefixes):
    """The answer to one approval_request, as a dict without type and call_id.

    Replace this function to make your own approver. Whatever it returns, the rest of
    the program sends as one `decision` line.
    """
    command = request["command"]
    allowed = ", ".join("`%s`" % p for p in prefixes)
    what_is_allowed = (
        "This approver allows only %s (alone or followed by arguments), one command "
        "at a time without shell syntax; ask the user about anything else." % allowed
    )
    if request.get("kind") == "session":
        # An interactive shell: there is no command to check.
        message = "An interactive shell is not approved. " + what_is_allowed
        return {"decision": "deny", "message": message}
    bad = shell_syntax_in(command)
    if bad is not None:
        message = "`%s` contains shell syntax (`%s`). %s" % (
            shown(command),
            shown(bad),
            what_is_allowed,
        )
        return {"decision": "deny", "message": message}
    if not any(matches(command, p) for p in prefixes):
        message = "`%s` is not on this approver's list. %s" % (shown(command), what_is_allowed)
        return {"decision": "deny", "message": message}
    return {"decision": "approve"}


def read_line(conn):
    """One line from the connection, without its newline; None if the peer closed
    early, the line is too long or it is not complete in time."""
    data = bytearray()
    while b"\n" not in data:
        if len(data) >= MAX_LINE:
            return None
        try:
            chunk = conn.recv(MAX_LINE)
        except (socket.timeout, OSError):
            return None
        if not chunk:
            return None
        data += chunk
    line, _, _ = bytes(data).partition(b"\n")
    if len(line) + 1 > MAX_LINE:
        return None
    return line


def send(conn, message):
    """Send one JSON object as one line. gate may have gone meanwhile (it timed out or
    was interrupted): then the request is void and there is nobody to tell."""
    try:
        conn.sendall(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
    except OSError as e:
        log("could not deliver the answer: %s" % e)


def peer_uid(conn):
    """The uid of the process on the other end (SO_PEERCRED: pid, uid, gid)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def log(text):
    print("approver: " + text, file=sys.stderr, flush=True)


def handle(conn, prefixes, memory):
    """Serve one connection: one request line in, one answer line out."""
    with conn:
        conn.settimeout(READ_TIMEOUT_SECONDS)
        # The socket is 0600 in a 0700 directory, so only this user can connect; check
        # anyway, the way gate checks the approver.
        if peer_uid(conn) != os.geteuid():
            log("refused a connection from another user")
            return
        line = read_line(conn)
        if line is None:
            return
        try:
            request = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            log("not a JSON line; closing")
            return
        # Closing without an answer is always safe: gate treats it as a denial.
        if not isinstance(request, dict) or request.get("version") != 1:
            log("not a version 1 request; closing")
            return
        call_id = request.get("call_id")
        if not isinstance(call_id, str):
            return
        kind = request.get("type")
        if kind == "approval_request" and isinstance(request.get("command"), str):
            if memory is not None and memory.covers(request):
                # `source: "remembered"` puts `decided_by: remembered` in gate's audit log.
                answer = {"decision": "approve", "source": "remembered"}
                verdict = "remembered"
            else:
                answer = decide(request, prefixes)
                approved = answer["decision"] == "approve"
                if approved and memory is not None:
                    memory.add(request)
                verdict = "approved" if approved else "denied"
            log(
                "%s `%s` in %s (session %s, pid %s)"
                % (
                    verdict,
                    shown(request["command"]),
                    request.get("work_dir"),
                    request.get("session_id"),
                    request.get("pid"),
                )
            )
            send(conn, dict({"type": "decision", "call_id": call_id}, **answer))
        elif kind == "question_request":
            # `gate ask`: a question for the person. Nobody is here to answer it.
            log("declined the question %s" % json.dumps(request.get("question")))
            send(
                conn,
                {
                    "type": "answer",
                    "call_id": call_id,
                    "declined": True,
                    "message": "this approver answers no questions; go on without an answer",
                },
            )
        else:
            log("unknown request type %s; closing" % json.dumps(kind))


def private_directory(path):
    """Create the socket's directory (0700) if needed, and make sure nobody else can
    use it: a real directory, ours, closed to group and others."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        sys.exit("approver: %s is not a directory" % path)
    if st.st_uid != os.geteuid():
        sys.exit("approver: %s belongs to another user" % path)
    if st.st_mode & 0o077:
        sys.exit("approver: %s is open to other users; run chmod 700 %s" % (path, path))


def remove_stale_socket(path):
    """A socket left by an approver that is gone is removed; a live one, or anything
    that is not a socket, is left alone."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        sys.exit("approver: %s exists and is not a socket" % path)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError as e:
        if e.errno != errno.ECONNREFUSED:
            raise
        os.unlink(path)
        return
    finally:
        probe.close()
    sys.exit("approver: another approver is listening on %s" % path)


def listen(path):
    """A listening socket at `path`, 0600 from the start."""
    private_directory(os.path.dirname(os.path.abspath(path)))
    remove_stale_socket(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        server.bind(path)
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    server.listen(128)
    return server


def main():
    parser = argparse.ArgumentParser(
        description="Approve gate's requests for commands that start with a given prefix; "
        "deny the rest."
    )
    parser.add_argument(
        "--socket",
        required=True,
        help="the socket to listen on (its directory is made private)",
    )
    parser.add_argument(
        "--allow-prefix",
        action="append",
        default=[],
        metavar="PREFIX",
        help="approve commands that are PREFIX or start with PREFIX and a space (repeatable)",
    )
    parser.add_argument(
        "--remember",
        action="store_true",
        help="remember each approval in this approver's memory and approve the same "
        "command again, unasked, for the rest of its session",
    )
    args = parser.parse_args()

    prefixes = []
    for prefix in args.allow_prefix:
        prefix = trim(prefix)
        if not prefix:
            parser.error("--allow-prefix: a blank prefix would approve everything")
        if shell_syntax_in(prefix) is not None:
            parser.error("--allow-prefix %s: a prefix cannot contain shell syntax" % shown(prefix))
        prefixes.append(prefix)
    if not prefixes:
        parser.error("give at least one --allow-prefix")

    memory = Memory() if args.remember else None
    server = listen(args.socket)
    # SIGTERM ends the program like Ctrl-C, so that the socket file is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log("listening on %s" % args.socket)
    try:
        while True:
            conn, _ = server.accept()
            # One thread per connection: gate waits on its connection until it gets
            # its answer, and many gates may be waiting at once.
            worker = threading.Thread(
                target=handle, args=(conn, prefixes, memory), daemon=True
            )
            worker.start()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        try:
            os.unlink(args.socket)
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    main()
