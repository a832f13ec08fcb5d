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
    """(bytes, FCT) of each completed flow, from its start to the sender's
    receipt of the last ACK (rdma_qps.csv), which is where the fork's
    QpComplete stops the clock (rdma-hw.cc ReceiveAck); flows.csv's FCT ends
    at the delivery of the last byte, one ACK path earlier.  A run stops
    when the last flow is delivered, so the last QP has no sender-side
    finish: its delivery FCT is taken (short by one ACK path, a few us)."""
    qps = {r["qp"]: r for r in csv.DictReader(open(os.path.join(d, "rdma_qps.csv")))}
    out = []
    for r in csv.DictReader(open(os.path.join(d, "flows.csv"))):
        if r["fct_s"] in ("", "-1"):
            continue
        q = qps.get(r["id"])
        assert q and "h" + q["src"] == r["src"] and "h" + q["dst"] == r["dst"], r
        fct = q["fct_s"] if q["fct_s"] not in ("", "-1") else r["fct_s"]
        out.append((int(r["size_bytes"]), float(fct)))
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


PROGS = [("aisim", "aisim, the fork's settings"),
         ("aisim-nowin", "aisim, the fork's settings but no window"),
         ("aisim-asis", "aisim, scenario as committed"), ("fork", "HPCC fork")]


def case(out, name):
    d = os.path.join(out, name)
    t = timing(os.path.join(d, "times.txt"))
    progs = [(p, label) for p, label in PROGS if p in t]
    summ, flows, pauses = {}, {}, {}
    for p, _ in progs:
        if p == "fork":
            flows[p], pauses[p] = fork_flows(os.path.join(d, "fork")), fork_pauses(os.path.join(d, "fork"))
        else:
            summ[p] = json.load(open(os.path.join(d, p, "summary.json")))
            flows[p], pauses[p] = aisim_flows(os.path.join(d, p)), summ[p]["results"].get("pfc_pauses", 0)
    n_flows = summ["aisim"]["results"]["flows"] if "aisim" in summ else 0
    print("## %s\n" % name)
    settings = os.path.join(d, "aisim-settings.txt")
    if os.path.exists(settings):
        print("aisim's settings for the fork's: `%s`\n" % " ".join(open(settings).read().split()))
    print("| program | rounds | wall s, median (range) | CPU s (user+sys), median (range) | peak RSS MB |")
    print("|---|---|---|---|---|")
    for p, label in progs:
        rs = t[p]
        print("| %s | %d | %s | %s | %.0f |" % (label, len(rs), med_range([r[0] for r in rs]),
                                                med_range([r[1] for r in rs]),
                                                max(r[2] for r in rs) / 1024))
    if "fork" in t:
        cf = statistics.median(r[1] for r in t["fork"])
        wf = statistics.median(r[0] for r in t["fork"])
        for p, label in progs:
            if p != "fork":
                print("\nfork / %s (medians): CPU %.1f x, wall %.1f x." %
                      (label, cf / statistics.median(r[1] for r in t[p]),
                       wf / statistics.median(r[0] for r in t[p])))
    print()
    head = " | ".join(label for _, label in progs)
    print("| | %s |\n|---|%s" % (head, "---|" * len(progs)))

    def row(what, f):
        print("| %s | %s |" % (what, " | ".join(f(p) for p, _ in progs)))
    row("flows completed", lambda p: "%d of %d" % (len(flows[p]), n_flows))
    row("data packets of the completed flows (1000 B payload)",
        lambda p: "%d" % sum(math.ceil(s / 1000) for s, _ in flows[p]))
    row("packet-hops, events", lambda p: "%d, %d" % (summ[p]["results"].get("packet_hops", 0),
                                                      summ[p].get("events", 0))
        if p in summ else "not reported")
    row("last completion (us)", lambda p: us(max((f for _, f in flows[p]), default=None)))
    row("PFC pauses (pause frames received)", lambda p: "%d" % pauses[p])
    row("ECN marks, CNPs", lambda p: "%d, %d" % (summ[p]["results"].get("ecn_marks", 0),
                                                 summ[p]["results"].get("rdma_cnps", 0))
        if p in summ else "not reported")
    print()
    if os.path.exists(os.path.join(d, "fork", "rate.txt")):
        rates(out, name, progs)
        return
    print("FCT in microseconds, from the QP's start to the sender's last ACK (both), "
          "nearest-rank percentiles, p50 / p99 / max:\n")
    print("| sizes | %s |\n|---|%s" % (head, "---|" * len(progs)))
    rows = [("all", 0, math.inf)]
    if len({s for s, _ in flows[progs[0][0]]}) > 1:
        rows += BUCKETS
    for label, lo, hi in rows:
        cells = []
        for p, _ in progs:
            x = [f for s, f in flows[p] if lo <= s < hi]
            cells.append("%d flows: %s / %s / %s" % (len(x), us(pct(x, 50)), us(pct(x, 99)),
                                                     us(max(x, default=None))) if x else "-")
        print("| %s | %s |" % (label, " | ".join(cells)))
    print()


def aisim_rates(d):
    """{src host: [(t_s, rate_bps)]} from rdma_rate.csv."""
    src = {r["qp"]: int(r["src"]) for r in csv.DictReader(open(os.path.join(d, "rdma_qps.csv")))}
    out = {}
    for r in csv.DictReader(open(os.path.join(d, "rdma_rate.csv"))):
        out.setdefault(src[r["qp"]], []).append((float(r["time_s"]), float(r["rate_bps"])))
    return out


def fork_rates(d):
    """{src host: [(t_s, rate_bps, acked bytes)]} from the rate monitor."""
    out = {}
    for line in open(os.path.join(d, "rate.txt")):
        t, node, _, rate, una = line.split()
        out.setdefault(int(node), []).append((int(t) * 1e-9, float(rate), int(una)))
    return out


def at(series, t):
    """The last sample at or before t (None before the first)."""
    best = None
    for x in series:
        if x[0] <= t + 1e-12:
            best = x
    return best


def rates(out, name, progs):
    d = os.path.join(out, name)
    series = {p: aisim_rates(os.path.join(d, p)) for p, _ in progs if p != "fork"}
    series["fork"] = fork_rates(os.path.join(d, "fork"))
    hosts = sorted(series["fork"])
    print("Sending rate of each QP (Gbps; aisim's DCQCN rate in rdma_rate.csv, the fork's "
          "qp->m_rate), sampled every 50 us:\n")
    print("| time ms | %s |\n|---|%s" % (" | ".join("%s h%d" % (label, h) for p, label in progs
                                                    for h in hosts), "---|" * len(progs) * len(hosts)))
    for t_ms in (0.5, 1.05, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 40):
        cells = []
        for p, _ in progs:
            for h in hosts:
                x = at(series[p].get(h, []), t_ms * 1e-3)
                cells.append("-" if x is None else "%.1f" % (x[1] / 1e9))
        print("| %g | %s |" % (t_ms, " | ".join(cells)))
    print()
    print("Mean sending rate over 20-40 ms, and goodput from the QP's start to the end of the "
          "run (aisim: bytes delivered, flows.csv; the fork: bytes acknowledged at its last "
          "sample), in Gbps:\n")
    print("| QP | %s |\n|---|%s" % (" | ".join("%s: rate / goodput" % l for _, l in progs),
                                    "---|" * len(progs)))
    for h in hosts:
        cells = []
        for p, _ in progs:
            xs = [x[1] for x in series[p].get(h, []) if 0.02 < x[0] <= 0.04 + 1e-9]
            rate = "%.1f" % (statistics.mean(xs) / 1e9) if xs else "-"
            if p == "fork":
                f = series["fork"][h]
                gp = f[-1][2] * 8 / (f[-1][0] - f[0][0] + 50e-6) / 1e9
            else:
                summ = json.load(open(os.path.join(d, p, "summary.json")))
                r = [r for r in csv.DictReader(open(os.path.join(d, p, "flows.csv")))
                     if r["src"] == "h%d" % h][0]
                gp = (int(r["delivered_bytes"]) * 8 /
                      (summ["sim_time_s"] - float(r["start_s"])) / 1e9)
            cells.append("%s / %.1f" % (rate, gp))
        print("| h%d | %s |" % (h, " | ".join(cells)))
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
