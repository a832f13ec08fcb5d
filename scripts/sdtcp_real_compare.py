#!/usr/bin/env python3
"""SDTCP, the simulator against the real testbed on the same setting
(docs/sdtcp.md, "Running it for real").

    scripts/sdtcp_real_compare.py [OUTDIR]            # as root; ~2 minutes

Runs the testbed (scripts/sdtcp-real/testbed.yaml: arms sdtcp, observe and
kernel, 5 runs each, interleaved) with aisim-sdtcp-real, then the simulator
on scripts/sdtcp-real/sim.yaml (the same rate, buffer, N, block, IW,
RTO_min, policy and controller) with SDTCP and without (scheme none),
seeds 1..5, and prints one table; then SDTCP alone with a controller 1 ms
and 5 ms away, real and simulated, in a second table: mean +- 95 % CI (Student t) over the 5
runs or seeds.  Real loss: packets the tbf dropped / packets it handled;
simulated: bytes dropped / bytes sent (every drop is at the bottleneck).
Retransmits: the senders' kernels' RetransSegs during a run; the
simulator's retransmitted segments.
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdtcp_table import ci  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))


def cell(vals, fmt, scale=1.0):
    m, h = ci(vals)
    if m != m:
        return "n/a"
    if h != h:
        return fmt.format(m * scale)
    return fmt.format(m * scale) + " ± " + fmt.format(h * scale)


def real(out, sets=()):
    cmd = [os.path.join(BUILD, "aisim-sdtcp-real"), "testbed",
           os.path.join(ROOT, "scripts/sdtcp-real/testbed.yaml"), "--out", out]
    for kv in sets:
        cmd += ["--set", kv]
    with open(os.path.join(out, "testbed-table.md"), "w") as t:
        subprocess.run(cmd, check=True, stdout=t)
    rows = list(csv.DictReader(open(os.path.join(out, "runs.csv"))))
    res = {}
    for arm in ("sdtcp", "observe", "kernel"):
        rs = [r for r in rows if r["arm"] == arm]
        res[arm] = {
            "p50": [float(r["qct_p50_ms"]) for r in rs],
            "p99": [float(r["qct_p99_ms"]) for r in rs],
            "loss": [float(r["loss"]) for r in rs],
            "bg": [float(r["bg_during_mbps"]) for r in rs],
            "retx": [float(r["burst_retrans"]) + float(r["bg_retrans"]) for r in rs],
            "n": len(rs),
        }
    rtts = [float(r["rtt_us"]) for r in rows]
    return res, min(rtts), sorted(rtts)[len(rtts) // 2]


def sim(out, scheme, latency_us=250):
    res = {"p50": [], "p99": [], "loss": [], "bg": [], "retx": [], "n": 0}
    for seed in range(1, 6):
        d = os.path.join(out, "sim-%s-%d-%d" % (scheme, latency_us, seed))
        subprocess.run([os.path.join(BUILD, "aisim"), "run",
                        os.path.join(ROOT, "scripts/sdtcp-real/sim.yaml"), "--seed", str(seed),
                        "--set", "net.extensions.sdtcp.scheme=" + scheme,
                        "--set", "net.extensions.sdtcp.controller.latency=%dus" % latency_us,
                        "--out", d, "-q", "--force"],
                       check=True, stdout=subprocess.DEVNULL)
        r = json.load(open(os.path.join(d, "summary.json")))["results"]
        s = r["sdtcp"]
        res["p50"].append(s["qct_p50_s"] * 1e3)
        res["p99"].append(s["qct_p99_s"] * 1e3)
        res["loss"].append(r["bytes_dropped"] / r["bytes_injected"])
        res["bg"].append(s["bg_bps_during"] * 1e-6)
        res["retx"].append(r["retransmits"])
        res["n"] += 1
    return res


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out/sdtcp-real-compare"
    os.makedirs(out, exist_ok=True)
    r, rtt_min, rtt_med = real(out)
    s = {"sdtcp": sim(out, "sdtcp"), "none": sim(out, "none")}
    print("base RTT (real handshakes): min %.1f us, median %.1f us\n" % (rtt_min, rtt_med))
    print("| where | arm | runs | QCT p50 ms | QCT p99 ms | loss | bg during Mb/s "
          "| retransmits per run |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [("real", "SDTCP banded (rewrite)", r["sdtcp"]),
            ("real", "observe only (NFQUEUE, no rewrite)", r["observe"]),
            ("real", "kernel only (reno)", r["kernel"]),
            ("sim", "SDTCP banded", s["sdtcp"]),
            ("sim", "NewReno (scheme none)", s["none"])]
    for where, arm, x in rows:
        line(where, arm, x)
    # a remote controller: latency one way added (real: twice, after the poll;
    # simulated: on top of the 250 us that stands for the polling)
    print("\n| where | arm | runs | QCT p50 ms | QCT p99 ms | loss | bg during Mb/s "
          "| retransmits per run |")
    print("|---|---|---|---|---|---|---|---|")
    for lat in LATENCIES_US:
        d = os.path.join(out, "lat%d" % lat)
        os.makedirs(d, exist_ok=True)
        rr, _, _ = real(d,
                        ["controller.latency=%dus" % lat, "arms=[sdtcp]"])
        line("real", "SDTCP, controller %g ms one way" % (lat / 1000), rr["sdtcp"])
        line("sim", "SDTCP, controller %g ms + 0.25 ms" % (lat / 1000),
             sim(out, "sdtcp", 250 + lat))


LATENCIES_US = (1000, 5000)


def line(where, arm, x):
    print("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
        where, arm, x["n"], cell(x["p50"], "{:.1f}"), cell(x["p99"], "{:.1f}"),
        cell(x["loss"], "{:.4f}"), cell(x["bg"], "{:.1f}"), cell(x["retx"], "{:.0f}")))


if __name__ == "__main__":
    main()
