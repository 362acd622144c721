#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The statistics of scripts/bench/bench.sh and reliable.sh, out of the
shell.

bench.sh measures and appends what it measured, one record a line, to
DIR/record (tab-separated); the round-trip tools write their samples to
DIR/NAME.us, one a line.  This turns them into the figures, the ratios,
the table on stdout and bench.json:

  stats.py report DIR JSON     table, "bench:"/"ratio:" lines, JSON
  stats.py median DIR FILE...  the pooled median of each sample file so
                               far, one a line (empty: no samples)
  stats.py idle HZ SECS NODE TICKS CTXSW [NODE TICKS CTXSW ...]
                               "node NODE CPU% CTXSW/s" per node from
                               its counts over SECS, then "worst CPU%
                               CTXSW/s RESOLUTION%"
  stats.py scale DIR JSON      scale.sh's figures: DIR/env ("KEY VALUE"
                               lines) and DIR/scale-N.rec per N ("fig KEY
                               VALUE", "msg PHASE I J MS OK REFUSED",
                               "rc STATUS" lines); a markdown table with a
                               column per N on stdout, bench-scale.json
  stats.py reliable DIR TXT JSON
                               reliable.sh's figures and round ratios
                               from DIR/record: a heading and the
                               "bench:"/"ratio:" lines on stdout, the
                               lines in TXT, reliable.json in JSON

The records:
  env   KEY VALUE             ibfs ibfs_bin bed device path_mtu kernel
                              date rounds rtt_n secs (the JSON's "env")
  acc   KEY VALUE [WEIGHT]    one sample of accumulator KEY (WEIGHT: its
                              seconds, for rates)
  pair  SET A REF [REF]       one paired measurement for ratio SET: ibfs's
                              A beside its reference(s), taken back to back
  fig   NAME VALUE UNIT WHAT  a figure measured as it is ("" = missing)
  stat  NAME SPEC UNIT WHAT   a figure computed here from the samples: SPEC
                              is "FUNC ARG...", FUNC one of FIGURE_SPECS;
                              a "{SPEC}" in WHAT is replaced by its value

Every number is formatted as the awk of the shell version formatted it
(mawk: integers as integers up to 2^31 - 1, others "%.6g" wherever awk
printed an intermediate sum), so the figures, the table and bench.json are
the same as before, byte for byte (but for a value that is no number,
which the JSON now gives as null).  reliable.sh records env (ibfs date
rounds secs rtt_n), fig, acc and stat records the same way.  Exit status of report: 0, or 3 when a
figure has no value (the output is complete all the same).
"""

import re
import sys
import time

NUM_RE = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
MAX_INT = 2147483647  # mawk prints an integral value as %d up to this

# How each ratio's pairs combine their references into one: "sum" when
# ibfs's one round trip is set beside two (the FUSE floor and
# ud_pingpong), "max" when beside the better of two modes; a set not
# named here has one reference.
PAIR_REF = {"rtt": "sum", "rtt-busy": "sum", "bw": "max"}


def log(msg):
    """Print a progress line on stderr, timestamped as bench.sh's log."""
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now))
    print(f"[{stamp}.{int(now * 1000) % 1000:03d}] {msg}", file=sys.stderr)


def num(s):
    """The number awk reads in string S (its leading number; 0 if none)."""
    m = NUM_RE.match(s or "")
    return float(m.group(0)) if m else 0.0


def awk_str(x):
    """Number X as awk's print writes it."""
    if x == int(x) and -MAX_INT <= x <= MAX_INT:
        return "%d" % int(x)
    return "%.6g" % x


class Acc:
    """An accumulator: the sum of its samples, of their weights, a count."""

    def __init__(self):
        self.sum = "0"
        self.sum2 = "0"
        self.cnt = 0

    def add(self, value, weight):
        """Add one sample (a string, as the shell passed it) and its weight."""
        # Each partial sum went through awk's print: keep its rounding.
        self.sum = awk_str(num(self.sum) + num(value))
        self.sum2 = awk_str(num(self.sum2) + num(weight or "0"))
        self.cnt += 1

    def mean(self):
        """The mean of the samples, to 2 decimals."""
        return "%.2f" % (num(self.sum) / self.cnt)

    def rate(self):
        """The sum over the sum of the weights (a pooled rate); "" if none."""
        w = num(self.sum2)
        return "%.2f" % (num(self.sum) / w) if w > 0 else ""


def max_of(a, b):
    """The larger of two numbers, either of which may be "" (missing)."""
    if a == "" and b == "":
        return ""
    if a == "":
        return b
    if b == "":
        return a
    return b if num(b) > num(a) else a


def median(v):
    """The median of the numbers V (the mean of the middle two of an even
    count); None if there are none."""
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def quotient(a, b, fmt):
    """A / B formatted as FMT; "" when A or B is missing or B is not > 0."""
    if a == "" or b == "" or not num(b) > 0:
        return ""
    return fmt % (num(a) / num(b))


def meets(v, op, t):
    """Whether number V meets target OP T (number T)."""
    return {"<=": v <= t, ">=": v >= t, "<": v < t, ">": v > t}[op]


def read_samples(path):
    """The samples in file PATH, one a line (awk's $1 of each), or None
    when there is no such file."""
    try:
        with open(path, encoding="utf-8") as f:
            return [num(ln.split()[0] if ln.split() else "") for ln in f.read().splitlines()]
    except FileNotFoundError:
        return None


def quantile(path, q):
    """The q-quantile (nearest rank; the median of an even count is the
    mean of the middle two) of sample file PATH, to 1 decimal ("" if none)."""
    v = sorted(read_samples(path) or [])
    n = len(v)
    if not n:
        return ""
    if q == 0.5:
        return "%.1f" % median(v)
    k = min(max(int(q * n + 0.999999), 1), n)
    return "%.1f" % v[k - 1]


def mean_of(path):
    """The mean of sample file PATH, to 1 decimal ("" if none)."""
    v = read_samples(path)
    if not v:
        return ""
    return "%.1f" % (sum(v) / len(v))  # added in file order, as awk did


def line_count(path):
    """The number of lines in file PATH ("" when there is none)."""
    try:
        with open(path, "rb") as f:
            return str(f.read().count(b"\n"))
    except FileNotFoundError:
        return ""


class Record:
    """What bench.sh recorded in DIR/record, read back in order."""

    def __init__(self, d):
        self.dir = d
        self.env = {}
        self.accs = {}
        self.pairs = {}
        self.figs = []  # (name, kind "fig" or "stat", value or spec, unit, what)
        with open(f"{d}/record", encoding="utf-8") as f:
            for line in f:
                self.take(line.rstrip("\n").split("\t"))

    def take(self, r):
        """Take one record (its fields)."""
        kind = r[0]
        if kind == "env":
            self.env[r[1]] = r[2]
        elif kind == "acc":
            self.accs.setdefault(r[1], Acc()).add(r[2], r[3] if len(r) > 3 else "")
        elif kind == "pair":
            self.pair(r[1], r[2], r[3:])
        elif kind in ("fig", "stat"):
            self.figs.append((r[1], kind, r[2], r[3], r[4]))
        else:
            raise ValueError(f"record: unknown kind {kind!r}")

    def pair(self, name, a, refs):
        """Keep pair A / REFS of set NAME as "ratio ref" (to 4 decimals)."""
        how = PAIR_REF.get(name, "one")
        if how == "sum":
            b = awk_str(num(refs[0]) + num(refs[1])) if refs[0] and refs[1] else ""
        elif how == "max":
            b = max_of(refs[0], refs[1])
        else:
            b = refs[0]
        r = quotient(a, b, "%.4f")
        if r:
            self.pairs.setdefault(name, []).append((r, b))

    def acc_sum(self, key):
        """Accumulator KEY's sum; "" when it has no samples."""
        return self.accs[key].sum if key in self.accs else ""

    def median_calm(self, name, best_is):
        """The median of set NAME's calm paired ratios, to 3 decimals, and
        "calm/all"; "" if there are no pairs.  A pair is calm when its
        reference is within 2x of the best one (BEST_IS "min": a latency,
        "max": a rate): the null FUSE floor swings 20x when the host
        deschedules the VM, and a disturbed pair measures the host, not
        ibfs."""
        pairs = self.pairs.get(name, [])
        if not pairs:
            return ""
        refs = [num(b) for _, b in pairs]
        if best_is == "min":
            best = min(refs)
            calm = [num(r) for (r, _), b in zip(pairs, refs) if b <= 2 * best]
        else:
            best = max(refs)
            calm = [num(r) for (r, _), b in zip(pairs, refs) if b >= best / 2]
        # never empty: the best pair itself is calm
        return "%.3f %d/%d" % (median(calm), len(calm), len(pairs))

    def stat(self, spec):
        """The value of figure SPEC (see FIGURE_SPECS); "" when missing."""
        f, *args = spec.split()
        return FIGURE_SPECS[f](self, *args)


def _sum0(rec, *keys):
    """The integer sum of accumulators KEYS, 0 for one with no samples."""
    return str(sum(int(num(rec.acc_sum(k) or "0")) for k in keys))


def _diff(rec, a, b):
    """Accumulator A's sum minus B's ("" if either has no samples)."""
    sa, sb = rec.acc_sum(a), rec.acc_sum(b)
    return awk_str(num(sa) - num(sb)) if sa and sb else ""


def _rate_mib(rec, key):
    """Accumulator KEY's pooled rate (2 decimals) in MiB (2 decimals)."""
    r = rec.accs[key].rate() if key in rec.accs else ""
    return "%.2f" % (num(r) / 1048576) if r else ""


# A "stat" record's SPEC: its first word, then its arguments.
FIGURE_SPECS = {
    "mean": lambda rec, k: rec.accs[k].mean() if k in rec.accs else "",
    "rate": lambda rec, k: rec.accs[k].rate() if k in rec.accs else "",
    "rate_mib": _rate_mib,
    "sum": lambda rec, k: rec.acc_sum(k),
    "sum0": _sum0,
    "diff": _diff,
    "median": lambda rec, f: quantile(f"{rec.dir}/{f}", 0.5),
    "quantile": lambda rec, q, f: quantile(f"{rec.dir}/{f}", num(q)),
    "mean_of": lambda rec, f: mean_of(f"{rec.dir}/{f}"),
    "lines": lambda rec, f: line_count(f"{rec.dir}/{f}"),
}


def what_of(rec, what):
    """WHAT with each "{SPEC}" (say "{sum KEY}") replaced by its value
    ("?" when missing)."""

    def value(m):
        """The value of the SPEC in match M."""
        if m.group(1) not in FIGURE_SPECS:
            return m.group(0)
        return rec.stat(m.group(0)[1:-1]) or "?"

    return re.sub(r"\{(\w+) [^{}]+\}", value, what)


class Ratio:
    """One ratio A / B against OP TARGET (OP "" = for scale, no target)."""

    def __init__(self, name, a, b, op, target, what, pairs=None):
        self.name, self.op, self.target, self.what = name, op, target, what
        self.pairs = pairs or []
        self.v = "n/a"  # A or B None or "": missing
        if a and b and num(b) != 0:
            self.v = "%.3f" % (num(a) / num(b))
        self.met = "null"
        if op and self.v != "n/a":
            self.met = "true" if meets(num(self.v), op, num(target)) else "false"

    def row(self):
        """Its line in the table."""
        verdict = {"true": "met", "false": "MISSED"}.get(self.met, "-")
        op_t = f"{self.op} {self.target}" if self.op else ""
        return "%-14s %8s %-9s %-7s %s" % (self.name, self.v, op_t, verdict, self.what)

    def json(self):
        """Its entry in bench.json's "ratios"."""
        v = "null" if self.v == "n/a" else self.v
        pairs = ""
        if self.pairs:
            pairs = ', "pairs": [' + ", ".join(f"[{r}, {b}]" for r, b in self.pairs) + "]"
        return (
            f'"{self.name}": {{"value": {v}, "op": "{self.op}", "target": '
            f'{self.target or "null"}, "met": {self.met}, "what": "{self.what}"{pairs}}}'
        )


def ratios(rec, fig):
    """Every ratio: the targets, each the median of its calm pairs, then
    the pooled figures' ratios for scale.  FIG: figure name -> value."""
    mtu = rec.env.get("path_mtu", "")
    out = []

    def calm(name, pairs, best_is, op, target, what):
        """A target judged on the calm pairs of set PAIRS."""
        a, _, n = rec.median_calm(pairs, best_is).partition(" ")
        out.append(Ratio(name, a, "1", op, target, what % n, rec.pairs.get(pairs)))

    def fsum(a, b, k=1):
        """K x figure A + figure B, to 1 decimal ("" if either is missing)."""
        if not fig.get(a) or not fig.get(b):
            return ""
        return "%.1f" % (k * num(fig[a]) + num(fig[b]))

    # Targets: the median of the calm paired ratios, each pair taken back
    # to back (see median_calm).  Every round-trip ratio sets means beside
    # means: ibv_ud_pingpong prints only usec/iter, its elapsed time over
    # its iterations, so no median of it exists; ibfs's and the FUSE
    # floor's are the means of their own per-trip samples (bench_rtt's
    # mean_us, or of the pooled sample files).  Their medians stay in the
    # table as figures.
    calm("rtt", "rtt", "min", "<=", "1.2",
         "ibfs mean round trip / (FUSE floor mean + ud_pingpong -e mean), "
         "median of %s calm paired blocks")
    calm("rtt_busy", "rtt-busy", "min", "<=", "1.2",
         "ibfs busy_poll mean round trip / (FUSE floor mean + ud_pingpong polling mean), "
         "median of %s calm paired rounds")
    # The better completion mode of ib_send_bw is the reference; rates
    # beside rates (bytes over seconds, MiB both: perftest's MB is 2^20).
    calm("bw", "bw", "max", ">=", "0.95",
         f"ibfs 1 MiB bandwidth / ib_send_bw -c UD -s {mtu} (better of polling and -e), "
         "median of %s calm pairs")
    # For scale, not targets: the same ibfs stream against ib_send_bw with
    # a doorbell batch (-l), as ibfs batches its posts.  The target keeps
    # its reference, one WR a post, which it was set against.
    for lst in ("16", "32"):
        calm(f"bw_l{lst}", f"bw-l{lst}", "max", "", "",
             f"ibfs 1 MiB bandwidth / ib_send_bw -c UD -s {mtu} -l {lst}, "
             "median of %s calm pairs (for scale)")
    calm("rate", "rate", "max", ">=", "0.8",
         "ibfs 64 B message rate / null FUSE 64 B write rate, median of %s calm pairs")
    g = fig.get
    for name, a, b, what in [
        ("rtt_pooled", g("rtt_mean_us"), fsum("floor_mean_us", "udpp_event_us"),
         "pooled figures: rtt_mean / (floor_mean + udpp_event mean) (for scale)"),
        ("rtt_both_ends", g("rtt_mean_us"), fsum("floor_mean_us", "udpp_event_us", 2),
         "pooled: rtt_mean / (2 x floor_mean + udpp_event mean): FUSE at both ends (for scale)"),
        ("bw_pooled", g("bw_MBps"), max_of(g("sendbw_mtu_MBps", ""), g("sendbw_mtu_e_MBps", "")),
         "pooled figures: bw / better ib_send_bw (for scale)"),
        ("rate_pooled", g("rate_msgs_per_s"), g("nullfs_write_msgs_per_s"),
         "pooled figures: rate / null FUSE write rate (for scale)"),
        ("rate_vs_verbs", g("rate_msgs_per_s"),
         max_of(g("sendbw_64_msgs_per_s", ""), g("sendbw_64_e_msgs_per_s", "")),
         "ibfs 64 B message rate / ib_send_bw -c UD -s 64, better mode (for scale)"),
        ("rate_vs_l32", g("rate_msgs_per_s"), g("sendbw_64_l32_msgs_per_s"),
         "ibfs 64 B message rate / ib_send_bw -c UD -s 64 -l 32 (for scale)"),
        ("shell", g("shell_ibfs_per_s"), g("shell_tmpfs_per_s"),
         "echo > ibfs file / echo > tmpfs file (for scale)"),
    ]:
        out.append(Ratio(name, a, b, "", "", what))
    out.append(Ratio("idle_cpu", g("idle_cpu_pct"), "100", "<", "0.01",
                     "idle daemon CPU, fraction of one core"))
    return out


def json_num(v):
    """V as a JSON number; null when missing or not a number."""
    return v if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", v or "") else "null"


def json_env(e, keys, numbers):
    """The JSON object of env E's KEYS, in order (those in NUMBERS bare)."""
    return "{" + ", ".join(
        f'"{k}": {e[k]}' if k in numbers else f'"{k}": "{e[k]}"' for k in keys) + "}"


def write_json(path, env, figs, ratio_entries):
    """Write the JSON file PATH: "env" (an object's text), then "figures"
    and "ratios", each from its entries' texts ("NAME": {...}), one a
    line."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n")
        f.write(f'  "env": {env},\n')
        f.write('  "figures": {\n' + ",\n".join("    " + x for x in figs) + "\n  },\n")
        f.write('  "ratios": {\n' + ",\n".join("    " + x for x in ratio_entries) + "\n  }\n")
        f.write("}\n")


def report(d, json_path):
    """Print the table and the "bench:"/"ratio:" lines; write bench.json."""
    rec = Record(d)
    names, fig, unit, what = [], {}, {}, {}
    missing = 0
    for name, kind, v, u, w in rec.figs:
        if kind == "stat":
            v = rec.stat(v)
            if not v:
                log(f"no value for {name}")
        missing += not v
        names.append(name)
        fig[name], unit[name], what[name] = v, u, what_of(rec, w)
    rs = ratios(rec, fig)
    e = rec.env
    print()
    print(f"== ibfs bench ({e['ibfs']}, {e['ibfs_bin']}; {e['bed']} bed, {e['device']}, "
          f"path MTU {e['path_mtu']}, {e['kernel']}, {e['date']})")
    print("%-24s %12s %-8s %s" % ("figure", "value", "unit", "what"))
    for n in names:
        print("%-24s %12s %-8s %s" % (n, fig[n] or "n/a", unit[n], what[n]))
    print()
    print("%-14s %8s %-9s %-7s %s" % ("ratio", "value", "target", "verdict", "what"))
    for r in rs:
        print(r.row())
    print()
    for n in names:
        print(f"bench: {n} {fig[n] or 'n/a'} {unit[n].replace(' ', '_')}")
    for r in rs:
        if r.op:
            print(f"ratio: {r.name} {r.v} (target {r.op} {r.target})")
    figs = [
        f'"{n}": {{"value": {json_num(fig[n])}, "unit": "{unit[n]}", '
        f'"what": "{what[n].replace(chr(34), chr(39))}"}}'
        for n in names
    ]
    env = json_env(e, ["ibfs", "ibfs_bin", "bed", "device", "path_mtu", "kernel", "date",
                       "rounds", "rtt_n", "secs"], ("path_mtu", "rounds", "rtt_n", "secs"))
    write_json(json_path, env, figs, [r.json() for r in rs])
    if missing:
        log(f"{missing} figure(s) missing")
        return 3
    return 0


def medians(d, files):
    """Print the median of each sample file DIR/FILE, one a line."""
    for f in files:
        print(quantile(f"{d}/{f}", 0.5))
    return 0


def idle(hz, secs, nodes):
    """Print each node's idle CPU (% of a core) and context switches per
    second from its counts over SECS, then the worse of each and the CPU
    figure's resolution."""
    worst, wake = "0", "0"
    h, s = num(hz), num(secs)
    for i in range(0, len(nodes), 3):
        name, ticks, ctx = nodes[i:i + 3]
        c = "%.2f" % (100 * num(ticks) / h / s)
        w = "%.1f" % (num(ctx) / s)
        print("node", name, c, w)
        worst = c if num(c) > num(worst) else worst
        wake = w if num(w) > num(wake) else wake
    print("worst", worst, wake, awk_str(100 / h / s))
    return 0


# reliable.sh's ratios: NAME, OP, TARGET (OP "" = for scale), then the
# figures A and B (with "{}" for the round's suffix: "" in the first,
# ".N" in round N) of the ratio A / B taken within each round.  The
# _vs_sent ones are the stricter reading: against what datagram mode
# wrote, which is what it would deliver on a wire that drops nothing (the
# bed's UDP link drops frames when the receiving VM falls behind).
RELIABLE_RATIOS = [
    ("rel_bw_0", ">=", "0.8", "rel0{}_bw_MBps", "dgram0{}_bw_MBps"),
    ("rel_bw_5", ">=", "0.8", "rel5{}_bw_MBps", "dgram0{}_bw_MBps"),
    ("rel_bw_0_vs_sent", ">=", "0.8", "rel0{}_bw_MBps", "dgram0{}_send_MBps"),
    ("rel_bw_5_vs_sent", ">=", "0.8", "rel5{}_bw_MBps", "dgram0{}_send_MBps"),
    ("rel_rtt_0", "", "", "rel0{}_rtt_median_us", "dgram0{}_rtt_median_us"),
]


def reliable(d, txt_path, json_path):
    """reliable.sh's summary: each figure as recorded (a "stat" one
    computed), and each of RELIABLE_RATIOS as the median of its rounds'
    ratios (3 decimals), with its verdict.  Prints a heading and the
    "bench:"/"ratio:" lines, writes the lines to TXT_PATH and the JSON."""
    rec = Record(d)
    e = rec.env
    fig, lines, figs = {}, [], []
    for name, kind, v, u, _ in rec.figs:
        if kind == "stat":
            v = rec.stat(v)
        fig[name] = v
        lines.append(f"bench: {name} {v or 'n/a'} {u}")
        figs.append(f'"{name}": {{"value": {json_num(v)}, "unit": "{u}"}}')
    sfxs = ["" if i == 1 else f".{i}" for i in range(1, int(e["rounds"]) + 1)]
    entries = []
    for name, op, t, a, b in RELIABLE_RATIOS:
        r = [quotient(fig.get(a.format(s), ""), fig.get(b.format(s), ""), "%.3f") for s in sfxs]
        m = median([num(x) for x in r if x])
        v = "" if m is None else "%.3f" % m
        if not v:
            verdict = "n/a"
        elif not op:
            verdict = "(for scale)"
        else:
            verdict = "met" if meets(num(v), op, num(t)) else "MISSED"
        target = f" (target {op} {t})" if op else ""
        lines.append(f"ratio: {name} {v or 'n/a'}{target} {verdict}, rounds {','.join(r)}")
        entries.append(f'"{name}": {{"value": {v or "null"}, "rounds": '
                       f'[{",".join(x for x in r if x)}], "target": "{op} {t}", '
                       f'"verdict": "{verdict}"}}')
    print(f"== reliable delivery on two VMs ({e['ibfs']}, {e['date']}, {e['rounds']} rounds)")
    print("\n".join(lines))
    with open(txt_path, "w", encoding="utf-8") as f:
        f.write("".join(ln + "\n" for ln in lines))
    env = json_env(e, ["ibfs", "date", "rounds", "secs", "rtt_n"], ("rounds", "secs", "rtt_n"))
    write_json(json_path, env, figs, entries)
    return 0


def scale_val(v):
    """V as a number when it is one (int or float), else the string."""
    if re.fullmatch(r"-?\d+", v or ""):
        return int(v)
    if re.fullmatch(r"-?\d+\.\d*([eE][-+]?\d+)?", v or ""):
        return float(v)
    return v


def scale_read(path):
    """One N's record: its figures, its messages, its exit status."""
    figs, msgs, rc = {}, [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.rstrip("\n").split(" ", 2)
            if w[0] == "fig" and len(w) == 3:
                figs[w[1]] = w[2]
            elif w[0] == "fig" and len(w) == 2:
                figs[w[1]] = ""
            elif w[0] == "msg":
                p = line.split()
                if len(p) == 7:
                    msgs.append({"phase": p[1], "from": int(p[2]),
                                 "to": int(p[3]), "ms": int(p[4]),
                                 "ok": p[5] == "1", "refused": int(p[6])})
            elif w[0] == "rc" and len(w) >= 2:
                rc = int(w[1])
    return figs, msgs, rc


def scale_times(msgs, phase):
    """min, median, max ms of the delivered messages of PHASE, or None."""
    v = [m["ms"] for m in msgs if m["phase"] == phase and m["ok"]]
    if not v:
        return None
    return {"min": min(v), "median": median(v), "max": max(v), "n": len(v)}


def scale_run(path):
    """One N's entry of bench-scale.json."""
    figs, msgs, rc = scale_read(path)
    run = {}
    for k, v in figs.items():
        if k.endswith("_list"):
            w = [int(x) for x in v.split()]
            run[k] = [w[i:i + 2] for i in range(0, len(w), 2)] \
                if k == "pair_list" else w
        else:
            run[k] = scale_val(v)
    run["exit"] = rc
    run["pair_ms"] = scale_times(msgs, "pair")
    run["peer_ms"] = scale_times(msgs, "peer")
    run["messages"] = msgs
    return run


def scale_cell(run, row):
    """The table cell of figure ROW for one run (an N)."""
    def g(k):
        v = run.get(k)
        return "n/a" if v is None or v == "" else awk_str(num(str(v)))

    def t3(k):
        t = run.get(k)
        if not t:
            return "n/a"
        return "%s / %s / %s" % (awk_str(t["min"]), awk_str(t["median"]),
                                 awk_str(t["max"]))
    if row == "start":
        return "n/a" if run.get("start_ms") is None else \
            "%.1f s" % (num(str(run["start_ms"])) / 1000)
    if row == "first":
        return "%s / %s ms" % (g("first_1N_ms"), g("first_N1_ms"))
    if row in ("pair_ms", "peer_ms"):
        return t3(row) + " ms"
    if row == "pairs_ok":
        return "%s of %s" % (g("pairs_ok"), g("pairs"))
    if row == "fds":
        return "%s / %s" % (g("fds_before"), g("fds_after"))
    if row == "rss":
        def mb(k):
            v = run.get(k)
            return "n/a" if v in (None, "") else "%.1f" % (num(str(v)) / 1024)
        return "%s / %s MiB" % (mb("rss_before_kb"), mb("rss_after_kb"))
    if row == "res":
        return "%s (N + peers used: %s)" % (g("resolutions"),
                                            g("resolutions_want"))
    if row == "tcp":
        return "%s / %s" % (g("tcp_sockets"), g("tcp_sessions"))
    if row == "incast":
        return "%s ms (%s of %s arrived, %s failed; most in flight %s)" % (
            g("incast_ms"), g("incast_ok"), g("incast_n"),
            g("incast_failed"), g("incast_inflight_max"))
    if row == "cpu":
        v = run.get("idle_cpu_pct")
        return "n/a" if v in (None, "") else "%.2f %%" % num(str(v))
    if row == "wakeups":
        return "%s / %s" % (g("idle_wakeups"), g("idle_wakeups_max"))
    if row == "start_rel":
        return "n/a" if run.get("start_rel_ms") in (None, "") else \
            "%.1f s" % (num(str(run["start_rel_ms"])) / 1000)
    if row.startswith("coll:"):
        p = row[5:]
        if run.get(p + "_n") in (None, ""):
            return "n/a"
        rss = run.get(p + "_rss_kb")
        return "%s ms, %s of %s, %s failed; %s fds, %s MiB; %s res" % (
            g(p + "_ms"), g(p + "_ok"), g(p + "_n"), g(p + "_failed"),
            g(p + "_fds"),
            "n/a" if rss in (None, "") else "%.1f" % (num(str(rss)) / 1024),
            g(p + "_res"))
    if row == "mc_ann":
        return "%s (%s a second per node)" % (g("mc_ann_tx"),
                                            g("mc_ann_per_s_node"))
    if row == "mc_res":
        return "%s / %s (N + peers used: %s)" % (
            g("mc_res_start"), g("resolutions"), g("resolutions_want"))
    return g(row)


SCALE_ROWS = [
    ("start", "wall time to start all N, until every mount's .status reads"),
    ("first", "first message node 1 -> node N from the last mount up / "
              "node N -> node 1"),
    ("peer_ms", "node 1 and its other peers, first message each way, "
                "min / median / max"),
    ("pair_ms", "random pairs' first messages, both ways, "
                "min / median / max"),
    ("pairs_ok", "random pairs that delivered both ways"),
    ("refused", "writes refused (ENOTCONN) before a message went"),
    ("fds", "fds of node 1, before talking / after its peers"),
    ("rss", "RSS of node 1, before talking / after its peers"),
    ("node1_peers", "peers node 1 talked to"),
    ("res", "route resolutions, all daemons (ah_resolutions)"),
    ("peers_used", "peers used, counted per daemon"),
    ("tcp", "established TCP sockets in the VM / bootstrap sessions"),
    ("incast", "incast: every newcomer writes to one node at once, "
               "release to last arrival (its route resolutions)"),
    ("cpu", "CPU of all daemons over the idle window, of one CPU"),
    ("wakeups", "wake-ups a second of an idle daemon (all its threads), "
                "mean / most"),
    ("start_rel", "wall time to start all N again, delivery = reliable"),
] + [
    ("coll:%s_%s" % (c, t),
     "%s, %s, all at once: release to last arrival, arrived of sent, "
     "writes failed; peak fds and RSS of node 1; route resolutions"
     % (what, mode))
    for t, mode in (("dgram", "datagram"), ("rel", "delivery = reliable"))
    for c, what in (("gather", "gather (every node writes to node 1)"),
                    ("scatter", "scatter (node 1 writes to every node)"),
                    ("a2a", "all-to-all among 32 (or N)"))
] + [
    ("exit", "exit status of the N's run (0: every daemon ended well)"),
]

# bootstrap = multicast (SCALE_BOOTSTRAP=multicast): its own rows.
SCALE_ROWS_MC = [
    ("start", "wall time to start all N, until every mount's .status reads"),
    ("mc_ann", "announces sent, all daemons, over the idle window after "
               "start-up"),
    ("mc_ann_rx", "announces taken, all daemons, same window"),
    ("mc_res", "route resolutions, all daemons: after start-up / after "
               "node 1 talked to its peers"),
    ("msgs_ok", "node 1's messages delivered"),
    ("cpu", "CPU of all daemons over the idle window, of one CPU"),
    ("wakeups", "wake-ups a second of an idle daemon (all its threads), "
                "mean / most"),
    ("exit", "exit status of the N's run (0: every daemon ended well)"),
]


def scale(d, json_path):
    """scale.sh's table on stdout and bench-scale.json."""
    import glob
    import json
    import os

    env = {}
    with open(os.path.join(d, "env"), encoding="utf-8") as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(" ")
            env[k] = v if k in ("ibfs", "date", "kernel") else scale_val(v)
    runs = {}
    for path in glob.glob(os.path.join(d, "scale-*.rec")):
        n = os.path.basename(path)[len("scale-"):-len(".rec")]
        runs[n] = scale_run(path)
    ns = sorted(runs, key=int)
    print("Scale, %s, ibfs %s, %s CPUs, %s idle s, seed %s, bootstrap %s:" % (
        env.get("date"), env.get("ibfs"), env.get("cpus"),
        env.get("idle_s"), env.get("seed"), env.get("bootstrap", "tcp")))
    print()
    print("| figure | " + " | ".join("N = %s" % n for n in ns) + " |")
    print("|---|" + "---|" * len(ns))
    rows = SCALE_ROWS_MC if env.get("bootstrap") == "multicast" else SCALE_ROWS
    for row, what in rows:
        print("| %s | " % what +
              " | ".join(scale_cell(runs[n], row) for n in ns) + " |")
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump({"env": env, "runs": runs}, f, indent=1)
        f.write("\n")
    bad = [n for n in ns if runs[n]["exit"] != 0]
    if bad:
        log("N = %s did not complete cleanly" % ", ".join(bad))
    return 1 if bad else 0


def main(argv):
    """Run the subcommand named in ARGV."""
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "report" and len(argv) == 4:
        return report(argv[2], argv[3])
    if cmd == "median" and len(argv) >= 3:
        return medians(argv[2], argv[3:])
    if cmd == "idle" and len(argv) >= 7 and (len(argv) - 4) % 3 == 0:
        return idle(argv[2], argv[3], argv[4:])
    if cmd == "scale" and len(argv) == 4:
        return scale(argv[2], argv[3])
    if cmd == "reliable" and len(argv) == 5:
        return reliable(argv[2], argv[3], argv[4])
    print("\n\n".join(__doc__.split("\n\n")[1:3]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
