#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The files' layering (issue 29), checked so that it stays that way.  From
# the call graph gcc writes (-fcallgraph-info, direct calls; a call through
# a hook, a function pointer, is no dependency), file A depends on file B
# when a function compiled in src/A.c calls one defined in src/B.c.  Then:
#   - no cycle of three or more files;
#   - two files that depend on each other are one concern split in two by
#     design, and both say so at the top: "one concern with OTHER.c" (any
#     case, across lines) in the file's first comment;
#   - the transport's files call only the ones above them in src/tp_int.h's
#     list (its top comment, one "  FILE.c  what" line each; the order is
#     read from there alone), and every src/tp_*.c and transport.c is in it.
# Each finding is printed with a call that makes it (FILE:LINE caller ->
# callee); exits 1 if there is any, 2 if a file does not compile.
#   scripts/lint-deps.sh          (gcc, python3; about two seconds)
# DEPS_CC names another gcc (clang has no -fcallgraph-info).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CC=${DEPS_CC:-gcc}
cd "$ROOT"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The flags that matter to what calls what: the Makefile's includes and
# defines; no optimisation, so that nothing is inlined away.
PKGS="fuse3 libibverbs librdmacm inih"
export CFLAGS_DEPS="-O0 -w -std=gnu11 -D_GNU_SOURCE -DIBFS_VERSION=\"lint\" \
-Iinclude $(pkg-config --cflags $PKGS 2>/dev/null || true)"
export CC TMP
if ! ls src/*.c | xargs -P "$(nproc)" -I{} sh -c \
	'f={}; b=${f#src/}; b=${b%.c}
	 exec $CC $CFLAGS_DEPS -fcallgraph-info -c "$f" -o "$TMP/$b.o" \
		-dumpdir "$TMP/" 2>"$TMP/$b.err"' 2>/dev/null; then
	cat "$TMP"/*.err >&2
	echo "lint-deps: a source file does not compile" >&2
	exit 2
fi

python3 - "$TMP" <<'EOF'
import glob
import os
import re
import sys
from collections import deque

tmp = sys.argv[1]
node_re = re.compile(r'node: \{ title: "([^"]*)" label: "[^"]*\\n[^"]*"( shape : ellipse)?')
edge_re = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)" label: "([^"]*)"')

# Who defines each function with external linkage; every unit's calls.
defs, calls = {}, {}
for ci in sorted(glob.glob(os.path.join(tmp, "*.ci"))):
    with open(ci, encoding="utf-8") as f:
        text = f.read()
    unit = os.path.basename(re.search(r'graph: \{ title: "([^"]*)"', text).group(1))
    for title, external in node_re.findall(text):
        if not external and ":" not in title:
            defs[title] = unit
    calls[unit] = edge_re.findall(text)

# dep[a][b]: the first call (in file order) of a into b, as text.
dep = {}
for a in sorted(calls):
    for src, dst, at in calls[a]:
        b = defs.get(dst)
        if b and b != a and b not in dep.setdefault(a, {}):
            dep[a][b] = f"{at.rsplit(':', 1)[0]} {src.split(':')[-1]} -> {dst}"
files = sorted(set(calls))
bad = []


def top_comment(path):
    """A file's first comment, as one line of words."""
    words = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                break
            words.append(line.strip().lstrip("/*").rstrip("*/"))
    return " ".join(" ".join(words).split()).lower()


def one_concern(a, b):
    """Whether both a and b say they are one concern with the other."""
    pat = "one concern with {}"
    return (pat.format(b) in top_comment("src/" + a) and
            pat.format(a) in top_comment("src/" + b))


# Strongly connected components (Tarjan, iterative).
index, low, on, stack, sccs = {}, {}, set(), [], []
for root in files:
    if root in index:
        continue
    work = [(root, iter(sorted(dep.get(root, {}))))]
    index[root] = low[root] = len(index)
    stack.append(root)
    on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(dep.get(w, {})))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(sorted(scc))


def shortest_cycle(scc):
    """A shortest cycle through the component's first file."""
    start, inside = scc[0], set(scc)
    prev, todo = {start: None}, deque([start])
    while todo:
        v = todo.popleft()
        for w in sorted(dep.get(v, {})):
            if w == start:
                path = [v]
                while prev[path[-1]]:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w in inside and w not in prev:
                prev[w] = v
                todo.append(w)
    return scc


for scc in sccs:
    if len(scc) == 2 and one_concern(*scc):
        continue
    cyc = shortest_cycle(scc)
    if len(scc) == 2:
        why = ("two files call each other, and do not both say "
               "\"one concern with\" the other at the top")
    else:
        why = f"a cycle of {len(scc)} files: {', '.join(scc)}"
    bad.append(f"src/{cyc[0]}: {why}\n    " + " -> ".join(cyc))
    for a in scc:
        for b in sorted(dep.get(a, {})):
            if b in scc:
                bad.append(f"    {a} -> {b}: {dep[a][b]}")

# The transport's layer order, as tp_int.h's top comment lists it.
order = []
with open("src/tp_int.h", encoding="utf-8") as f:
    for line in f:
        if line.startswith(" */"):
            break
        m = re.match(r" \*   (\w+\.c)\s", line)
        if m:
            order.append(m.group(1))
rank = {name: i for i, name in enumerate(order)}
for name in files:
    if (name.startswith("tp_") or name == "transport.c") and name not in rank:
        bad.append(f"src/{name}: a transport file missing from the list "
                   "of src/tp_int.h")
for name in order:
    if name not in files:
        bad.append(f"src/tp_int.h: lists {name}, which is no file of src/")
for a in order:
    for b in sorted(dep.get(a, {})):
        if b in rank and rank[b] > rank[a]:
            bad.append(f"src/{a}: calls up into {b}, which src/tp_int.h "
                       f"lists after it (a file calls only those listed "
                       f"before it): {dep[a][b]}")

for line in bad:
    print(line)
sys.exit(1 if bad else 0)
EOF
