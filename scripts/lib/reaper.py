#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Keep a daemon that forks (ibfs without -f) a child of this process.

    reaper.py DIR CMD [ARG...]

Run CMD as a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so that the
daemon its forking parent leaves behind is reparented here, not to init,
and its exit status can be seen (scripts/lib/ibfs.sh's
ibfs_start_forking). Once CMD exits, writes the daemon's pid to DIR/pid,
then CMD's exit status (the forking parent's verdict on start-up) to
DIR/parent: a reader that sees DIR/parent finds DIR/pid already there.
SIGTERM, SIGINT and SIGHUP are passed on to the daemon (to CMD while it
runs). Exits with the daemon's status (128 + N for signal N), or 0
when CMD left none.

Where nobody serves /dev/log (the test bed's VM runs no syslog daemon)
it serves it while it runs, and prints each message as a line on stdout
("ibfs[PID]: TEXT (syslog)"), so that what the daemon logs once it has
left the terminal is not lost; it then creates DIR/syslog.
"""
import ctypes
import errno
import os
import re
import select
import signal
import socket
import sys

PR_SET_CHILD_SUBREAPER = 36
DEV_LOG = "/dev/log"


def put(path, text):
    """Write text to path whole: a reader never sees half of it."""
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.rename(path + ".tmp", path)


def code(status):
    """A wait status as the shell's $? shows it."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def children():
    """The pids whose parent is this process."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        # the name, in parentheses, may hold spaces: split after it
        if int(stat[stat.rindex(")") + 2:].split()[1]) == me:
            out.append(int(d))
    return out


def serve_dev_log():
    """A socket bound to /dev/log when nobody serves it, else None."""
    if os.path.exists(DEV_LOG):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            probe.connect(DEV_LOG)
            return None  # a syslog daemon is there: leave it be
        except OSError as e:
            if e.errno != errno.ECONNREFUSED:
                return None
            os.unlink(DEV_LOG)  # left by a reaper that was killed
        finally:
            probe.close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.bind(DEV_LOG)
    except OSError:
        s.close()
        return None
    return s


def drain(sock):
    """Print what waits on the syslog socket, one line a message."""
    while sock:
        try:
            msg = sock.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        text = msg.decode(errors="replace").rstrip("\n\0")
        # "<PRI>Mmm dd hh:mm:ss TAG[PID]: TEXT", as glibc's syslog sends
        text = re.sub(r"^<\d+>([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d )?", "",
                      text)
        print(text + " (syslog)", flush=True)


def main():
    if len(sys.argv) < 3:
        print("usage: reaper.py DIR CMD [ARG...]", file=sys.stderr)
        return 2
    out, argv = sys.argv[1], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        print("reaper.py: prctl: %s" % os.strerror(ctypes.get_errno()),
              file=sys.stderr)
        return 2
    sock = serve_dev_log()
    if sock:
        put(os.path.join(out, "syslog"), DEV_LOG)
    state = {"cmd": None, "daemon": None}

    def forward(sig, _frame):
        pid = state["daemon"] or state["cmd"]
        if pid:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    state["cmd"] = os.fork()
    if state["cmd"] == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    try:
        while True:
            if sock:
                select.select([sock], [], [], 0.1)
                drain(sock)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG if sock else 0)
            except ChildProcessError:
                return 0  # CMD left no daemon
            if pid == 0:
                continue
            if pid == state["cmd"]:
                state["cmd"] = None
                # the daemon was reparented here before CMD's exit came;
                # DIR/pid is written before DIR/parent, which is what the
                # shell waits for and then reads DIR/pid
                kids = [] if state["daemon"] else children()
                if kids:
                    state["daemon"] = kids[0]
                    put(os.path.join(out, "pid"), str(kids[0]))
                put(os.path.join(out, "parent"), str(code(status)))
                if not state["daemon"]:
                    return 0
            else:
                # an orphan: the daemon, that may have ended before CMD
                if not state["daemon"]:
                    state["daemon"] = pid
                    put(os.path.join(out, "pid"), str(pid))
                if pid == state["daemon"]:
                    state["status"] = code(status)
            if state["cmd"] is None and "status" in state:
                return state["status"]
    finally:
        if sock:
            drain(sock)
            os.unlink(DEV_LOG)
            sock.close()


if __name__ == "__main__":
    sys.exit(main())
