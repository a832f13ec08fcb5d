#!/usr/bin/env python3
"""Tables for scripts/hpcc-compare.sh: aisim against the HPCC ns-3 fork.

  tools/hpcc/compare.py OUT_DIR > OUT_DIR/results.md

Each case is a directory OUT_DIR/<case>/ holding aisim/ (an aisim run
directory), fork/ (the fork's fct.txt and pfc.txt) and times.txt (one line
per run: program, round, wall s, user s, system s, peak RSS KB).
"""
import csv
import json
import math
import os
import statistics
import sys

BUCKETS = [("0-10KB", 0, 10e3), ("10KB-100KB", 10e3, 100e3),
           ("100KB-1MB", 100e3, 1e6), ("over-1MB", 1e6, math.inf)]


def pct(xs, p):
    """Nearest-rank percentile (the same rule on both sides)."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def us(x):
    return "-" if x is None else "%.1f" % (x * 1e6)


def aisim_flows(d):
    out = []
    for r in csv.DictReader(open(os.path.join(d, "flows.csv"))):
        if r["fct_s"] not in ("", "-1"):
            out.append((int(r["size_bytes"]), float(r["fct_s"])))
    return out


def fork_flows(d):
    out = []
    p = os.path.join(d, "fct.txt")
    for line in open(p) if os.path.exists(p) else []:
        f = line.split()
        out.append((int(f[4]), int(f[6]) * 1e-9))
    return out


def fork_pauses(d):
    p = os.path.join(d, "pfc.txt")
    return sum(1 for line in open(p) if line.split()[4] == "1") if os.path.exists(p) else 0


def timing(path):
    runs = {}
    for line in open(path):
        prog, _, wall, user, system, rss = line.split()
        runs.setdefault(prog, []).append((float(wall), float(user) + float(system), int(rss)))
    return runs


def med_range(xs):
    return "%.2f (%.2f-%.2f)" % (statistics.median(xs), min(xs), max(xs))


def case(out, name):
    d = os.path.join(out, name)
    a_sum = json.load(open(os.path.join(d, "aisim", "summary.json")))
    res = a_sum["results"]
    af, ff = aisim_flows(os.path.join(d, "aisim")), fork_flows(os.path.join(d, "fork"))
    n_flows = res.get("flows", len(af))
    print("## %s\n" % name)
    t = timing(os.path.join(d, "times.txt"))
    a, f = t.get("aisim", []), t.get("fork", [])
    print("| program | rounds | wall s, median (range) | CPU s (user+sys), median (range) | peak RSS MB |")
    print("|---|---|---|---|---|")
    for prog, rs in (("aisim", a), ("HPCC fork", f)):
        if rs:
            print("| %s | %d | %s | %s | %.0f |" % (prog, len(rs), med_range([r[0] for r in rs]),
                                                    med_range([r[1] for r in rs]),
                                                    max(r[2] for r in rs) / 1024))
    if a and f:
        wa, wf = statistics.median(r[0] for r in a), statistics.median(r[0] for r in f)
        ca, cf = statistics.median(r[1] for r in a), statistics.median(r[1] for r in f)
        print("\nSpeed ratio (fork / aisim, medians): wall %.1f x, CPU %.1f x.\n" % (wf / wa, cf / ca))
    pkts = sum(math.ceil(s / 1000) for s, _ in af) if af else 0
    print("| | aisim | HPCC fork |\n|---|---|---|")
    print("| flows completed | %d of %d | %d of %d |" % (len(af), n_flows, len(ff), n_flows))
    print("| data packets of the completed flows (1000 B payload) | %d | %d |" %
          (pkts, sum(math.ceil(s / 1000) for s, _ in ff)))
    print("| packet-hops (aisim), events (aisim) | %d, %d | not reported |" %
          (res.get("packet_hops", 0), a_sum.get("events", 0)))
    print("| simulated time to the last completion | %s us | %s us |" %
          (us(max((fct for _, fct in af), default=None)),
           us(max((fct for _, fct in ff), default=None))))
    print("| PFC pauses (pause frames received) | %d | %d |" %
          (res.get("pfc_pauses", 0), fork_pauses(os.path.join(d, "fork"))))
    print("| ECN marks, CNPs (aisim) | %d, %d | not reported |" %
          (res.get("ecn_marks", 0), res.get("rdma_cnps", 0)))
    print()
    print("FCT in microseconds (nearest-rank percentiles):\n")
    print("| sizes | flows aisim / fork | p50 aisim | p50 fork | p99 aisim | p99 fork | max aisim | max fork |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [("all", 0, math.inf)]
    if len({s for s, _ in af}) > 1:
        rows += BUCKETS
    for label, lo, hi in rows:
        x = [fct for s, fct in af if lo <= s < hi]
        y = [fct for s, fct in ff if lo <= s < hi]
        if not x and not y:
            continue
        print("| %s | %d / %d | %s | %s | %s | %s | %s | %s |" %
              (label, len(x), len(y), us(pct(x, 50)), us(pct(y, 50)), us(pct(x, 99)),
               us(pct(y, 99)), us(max(x, default=None)), us(max(y, default=None))))
    print()


def main():
    out = sys.argv[1]
    machine = os.path.join(out, "machine.txt")
    print("# aisim against the HPCC ns-3 fork\n")
    if os.path.exists(machine):
        print("```\n" + open(machine).read().rstrip() + "\n```\n")
    for name in sorted(os.listdir(out)):
        if os.path.exists(os.path.join(out, name, "times.txt")):
            case(out, name)


if __name__ == "__main__":
    main()
