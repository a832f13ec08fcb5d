#!/usr/bin/env python3
"""sdtcp_table.py - the multi-seed tables of docs/sdtcp.md.

Runs `build/aisim sweep` on the sdtcp examples for every scheme and prints
Markdown tables with the mean and the 95 % confidence interval (Student t)
over seeds:

  n        sdtcp/incast-bg over N = 4..96, every scheme (paper defaults:
           IW 10, controller 100 us + 50 us)
  fast     the same at N = 32 in the setting of the test (IW 2, 10 us
           controller, rtt 100 us)
  delay    sdtcp/delay over the one-way controller latency 10 us .. 10 ms
  bg       N = 32 in the test's setting with 1, 2 and 3 background flows
  leaf     sdtcp/leafspine, SDTCP against NewReno
  pure     sdtcp/pure-incast, paper-minimal against NewReno

Usage (from the repository root, after make):
  scripts/sdtcp_table.py n [SEEDS]
Output directories go under $SDTCP_OUT (default out/sdtcp-study); with
SDTCP_REUSE=1 a sweep whose sweep.json is there is read, not run again.
"""
import json
import math
import os
import subprocess
import sys

AISIM = os.environ.get("AISIM", "build/aisim")
OUT = os.environ.get("SDTCP_OUT", "out/sdtcp-study")

SCHEMES = [
    ("NewReno, RTO_min 200 ms", ["net.extensions.sdtcp.scheme=none"]),
    ("NewReno, RTO_min 1 ms", ["net.extensions.sdtcp.scheme=none", "net.transport.min_rto=1ms"]),
    ("DCTCP (K 20 pkts)", ["net.extensions.sdtcp.scheme=none", "net.transport.cc=dctcp"]),
    ("ICTCP", ["net.extensions.sdtcp.scheme=ictcp"]),
    ("SDTCP paper-minimal", ["net.extensions.sdtcp.policy.mode=minimal"]),
    ("SDTCP banded", ["net.extensions.sdtcp.policy.mode=banded"]),
    ("ablation: throttle all", ["net.extensions.sdtcp.policy.mode=all"]),
    ("ablation: fixed window", ["net.extensions.sdtcp.policy.mode=fixed"]),
]

FAST = ["net.transport.init_cwnd=2", "net.extensions.sdtcp.controller.latency=10us",
        "net.extensions.sdtcp.controller.processing=5us", "net.extensions.sdtcp.controller.renotify=0s",
        "net.extensions.sdtcp.policy.rtt=100us"]

METRICS = [
    ("burst loss", "sdtcp.burst_loss_rate", "{:.4f}", 1),
    ("burst goodput Mb/s", "sdtcp.burst_goodput_bps", "{:.0f}", 1e-6),
    ("QCT p50 ms", "sdtcp.qct_p50_s", "{:.1f}", 1e3),
    ("QCT p99 ms", "sdtcp.qct_p99_s", "{:.0f}", 1e3),
    ("bg during Mb/s", "sdtcp.bg_bps_during", "{:.0f}", 1e-6),
    ("bg after Mb/s", "sdtcp.bg_bps_after", "{:.0f}", 1e-6),
    ("ctl msgs/s", "sdtcp.controller.messages_per_sim_s", "{:.0f}", 1),
]

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262}


def sweep(name, scenario, sets, vary, seeds):
    out = os.path.join(OUT, name)
    if os.environ.get("SDTCP_REUSE") and os.path.exists(os.path.join(out, "sweep.json")):
        with open(os.path.join(out, "sweep.json")) as f:
            return json.load(f)         # tables again from the sweeps of an earlier run
    cmd = [AISIM, "sweep", scenario, "--seeds", seeds, "--out", out, "--force", "-q",
           "--jobs", "2"]
    for v in vary:
        cmd += ["--vary", v]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "sweep.json")) as f:
        return json.load(f)


def rows_of(doc):
    return doc["points"]


def ci(vals):
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    if not vals:
        return float("nan"), float("nan")
    m = sum(vals) / len(vals)
    if len(vals) < 2:
        return m, float("nan")
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))
    return m, T95.get(len(vals) - 1, 1.96) * sd / math.sqrt(len(vals))


def cell(rows, key, fmt, scale):
    m, h = ci([r.get(key) for r in rows])
    if math.isnan(m):
        return "n/a"
    if math.isnan(h):
        return fmt.format(m * scale)
    return fmt.format(m * scale) + " ± " + fmt.format(h * scale)


def table(title, groups, metrics=METRICS):
    print("\n" + title + "\n")
    print("| " + " | ".join(["scheme", "N"] + [m[0] for m in metrics]) + " |")
    print("|" + "---|" * (2 + len(metrics)))
    for label, n, rows in groups:
        print("| " + " | ".join([label, str(n)] + [cell(rows, k, f, s) for _, k, f, s in
                                                    metrics]) + " |")


def by(rows, key):
    out = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return out


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "n"
    seeds = sys.argv[2] if len(sys.argv) > 2 else "1..5"
    if what in ("n", "fast"):
        groups = []
        ns = "4,8,16,32,64,96" if what == "n" else "32"
        for i, (label, sets) in enumerate(SCHEMES):
            extra = FAST if what == "fast" else []
            doc = sweep("%s-%d" % (what, i), "sdtcp/incast-bg", extra + sets,
                        ["net.incast.senders=" + ns], seeds)
            for n, rows in sorted(by(rows_of(doc), "net.incast.senders").items(), key=lambda x: int(x[0])):
                groups.append((label, n, rows))
        if what == "n":
            groups.sort(key=lambda g: int(g[1]))
        table("N sweep" if what == "n" else "N = 32, fast controller, IW 2", groups)
    elif what == "delay":
        doc = sweep("delay", "sdtcp/delay", [], [
            "net.extensions.sdtcp.controller.latency=10us,30us,100us,300us,1ms,3ms,10ms"], seeds)
        groups = [("latency " + k, 32, v) for k, v in by(rows_of(doc), "net.extensions.sdtcp.controller.latency").items()]
        table("controller delay", groups)
        base = sweep("delay-none", "sdtcp/delay", ["net.extensions.sdtcp.scheme=none"], [
            "net.incast.senders=32"], seeds)
        table("the same without controller", [("NewReno", 32, rows_of(base))])
    elif what == "bg":
        groups = []
        hosts = ["h99", "h98", "h97"]
        for i, (label, sets) in enumerate([SCHEMES[0], SCHEMES[5]]):
            for k in (1, 2, 3):
                flows = "net.flows=[" + ", ".join("{src: %s, dst: h0}" % h
                                                  for h in hosts[:k]) + "]"
                doc = sweep("bg-%d-%d" % (i, k), "sdtcp/incast-bg", FAST + sets + [flows],
                            ["net.incast.senders=32"], seeds)
                groups.append(("%s, %d background" % (label, k), 32, rows_of(doc)))
        table("background flows", groups)
    elif what in ("leaf", "pure"):
        sc = "sdtcp/leafspine" if what == "leaf" else "sdtcp/pure-incast"
        groups = []
        for label, sets in [("SDTCP (scenario's mode)", []), ("NewReno", ["net.extensions.sdtcp.scheme=none"])]:
            doc = sweep(what + "-" + str(len(groups)), sc, sets, ["net.tail=10ms"], seeds)
            groups.append((label, "-", rows_of(doc)))
        table(sc, groups)
    else:
        sys.exit("usage: sdtcp_table.py n|fast|delay|bg|leaf|pure [SEEDS]")


if __name__ == "__main__":
    main()
