#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A stranger on a bootstrap port, for the e2e tests (issue 20).

  bs_stranger.py hello HOST PORT SRC NAME [auth] [ready HOLD_S]
      connect from address SRC, send a hello as NAME (with HELLO_F_AUTH
      and a nonce if "auth"), and print how many bytes came back before
      the other side closed ("got N eof") or 5 s passed ("got N open").
      With "ready" and a whole hello back, send READY and hold the
      session HOLD_S seconds (as a rogue would) before printing.
  bs_stranger.py hold HOST PORT SRCS N STOPFILE
      keep N silent connections open from the addresses SRCS (comma list,
      round robin), opening again each one the other side closes, until
      STOPFILE exists; print "opened N closed N".
  bs_stranger.py cycles HOST PORT SRC N
      N times: connect from SRC, send a hello whose name holds a newline
      and a forged log line, close.  Print "cycles N".

The hello is bootstrap_hello.c's fixed layout, 128 bytes big-endian.
"""
import os
import select
import socket
import struct
import sys
import time

HELLO_LEN = 128
MAGIC = 0x49424848


def hello_version():
    """HELLO_VERSION as include/bootstrap.h says it, so that a stranger
    speaks the daemon's version and is refused for what it claims, not
    for its version."""
    h = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "..", "..", "include", "bootstrap.h")
    with open(h, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[:2] == ["#define", "HELLO_VERSION"]:
                return int(w[2], 0)
    raise SystemExit(f"no HELLO_VERSION in {h}")


VERSION = hello_version()
READY = 0x49424852


def hello(name, auth=False, qpn=0x123, delivery=0):
    """A hello as a daemon would send it; name is bytes."""
    gid = bytes(10) + b"\xff\xff" + socket.inet_aton("10.0.2.15")
    b = struct.pack(">IHBB", MAGIC, VERSION, delivery, 2)
    b += name.ljust(64, b"\0")[:64]
    b += struct.pack(">IIHBB", qpn, 0x1B1F5000, 0, 3, 0)
    b += gid
    b += struct.pack(">III", 1 if auth else 0, 1 << 20, 0)
    b += os.urandom(16) if auth else bytes(16)
    assert len(b) == HELLO_LEN
    return b


def dial(host, port, src, block=True):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    if block:
        s.settimeout(5)
        s.connect((host, port))
    else:
        s.setblocking(False)
        s.connect_ex((host, port))
    return s


def read_all(s, want, secs):
    got = b""
    end = time.time() + secs
    while len(got) < want and time.time() < end:
        s.settimeout(max(0.01, end - time.time()))
        try:
            d = s.recv(want - len(got))
        except socket.timeout:
            break
        except ConnectionResetError:
            return got, True
        if not d:
            return got, True
        got += d
    return got, False


def cmd_hello(host, port, src, name, rest):
    s = dial(host, port, src)
    s.sendall(hello(name.encode(), auth="auth" in rest))
    got, eof = read_all(s, HELLO_LEN, 5)
    if "ready" in rest and len(got) == HELLO_LEN and not eof:
        s.sendall(struct.pack(">I", READY))
        hold = float(rest[rest.index("ready") + 1])
        more, eof = read_all(s, 1 << 16, hold)
        got += more
    print("got %d %s" % (len(got), "eof" if eof else "open"))


def cmd_hold(host, port, srcs, n, stop):
    srcs = srcs.split(",")
    socks = {}
    opened = closed = 0
    while not os.path.exists(stop):
        while len(socks) < n:
            s = dial(host, port, srcs[opened % len(srcs)], block=False)
            socks[s.fileno()] = s
            opened += 1
        r, _, _ = select.select(list(socks.values()), [], [], 0.1)
        for s in r:
            try:
                d = s.recv(4096)
            except OSError:
                d = b""
            if not d:
                closed += 1
                del socks[s.fileno()]
                s.close()
        if r:
            time.sleep(0.02)  # a stranger's pace, not a spin
    print("opened %d closed %d" % (opened, closed))


def cmd_cycles(host, port, src, n):
    h = hello(b"x\nibfs: peer gamma up (forged)")
    for _ in range(n):
        s = dial(host, port, src)
        try:
            s.send(h)
        except OSError:
            pass
        s.close()
    print("cycles %d" % n)


def main(a):
    host, port = a[1], int(a[2])
    if a[0] == "hello":
        cmd_hello(host, port, a[3], a[4], a[5:])
    elif a[0] == "hold":
        cmd_hold(host, port, a[3], int(a[4]), a[5])
    elif a[0] == "cycles":
        cmd_cycles(host, port, a[3], int(a[4]))
    else:
        sys.exit("bs_stranger.py: unknown command " + a[0])


if __name__ == "__main__":
    main(sys.argv[1:])
