#!/usr/bin/env python3
"""Write the HPCC ns-3 fork's input files for a network aisim has run.

  tools/hpcc/scenario.py AISIM_RUN_DIR OUT_DIR --cc dcqcn|hpcc
        [--delay 1us] [--buffer-mb 32] [--stop SECONDS] [--flow-size BYTES]
        [--rate-mon NS]

Reads the run directory's links.csv (every port "a->b" with its rate) and
flows.csv (src, dst, size, start), and writes OUT_DIR/topology.txt,
flow.txt, trace.txt and config.txt for the fork's scratch/third.cc, so
that the fork runs the same network and the same flows:

- nodes: host hN is the fork's node N; switches follow, numbered in their
  order of first appearance in links.csv (the fork needs no names);
- links: one line per pair of ports, at the port's rate, with --delay;
- flows: priority group 3 (the fork's data class), destination port 100,
  the flow's size in bytes (a flow without a size, a long-running one,
  gets --flow-size) and its start time;
- config.txt: the fork's mix/config.txt values (its published defaults),
  except the file names, CC_MODE (1 DCQCN "Mellanox", 3 HPCC),
  SIMULATOR_STOP_TIME, BUFFER_SIZE, ENABLE_TRACE 0 (no packet trace: the
  trace file would be the run's main cost) and QLEN_MON_START after the
  end (no queue sampling every 100 ns).

It also writes OUT_DIR/bdp.txt: the fork's maxRtt (ns), maxBdp (bytes),
computed as third.cc does (breadth-first shortest paths; RTT = 2 x the
propagation delay + one 1000 B serialisation per hop; BDP = RTT x the
path's slowest link), and the window in packets that maxBdp allows a QP at
line rate (HAS_WIN 1, GLOBAL_T 1: every QP, whatever its CC, may have
maxBdp bytes in flight, scaled by its rate / line rate with VAR_WIN 1; the
fork sends while in flight <= window, so floor(maxBdp / 1000) + 1 packets).
"""
import argparse
import csv
import os
import re

# The fork's RED per link speed (mix/config.txt KMIN_MAP/KMAX_MAP/PMAX_MAP,
# in KB), plus 10 and 40 Gbps, which it has no entry for (third.cc asserts
# one per speed), at the values aisim's examples use: its 25 Gbps values
# x 0.4 and x 1.6 (examples/rdma/websearch-leafspine.yaml).
RED = {10**10: (40, 160, 0.2), 25 * 10**9: (100, 400, 0.2), 4 * 10**10: (160, 640, 0.2),
       5 * 10**10: (200, 800, 0.2), 10**11: (400, 1600, 0.2)}

CONFIG = """\
ENABLE_QCN 1
USE_DYNAMIC_PFC_THRESHOLD 1
PACKET_PAYLOAD_SIZE 1000
TOPOLOGY_FILE {d}/topology.txt
FLOW_FILE {d}/flow.txt
TRACE_FILE {d}/trace.txt
TRACE_OUTPUT_FILE {d}/mix.tr
FCT_OUTPUT_FILE {d}/fct.txt
PFC_OUTPUT_FILE {d}/pfc.txt
SIMULATOR_STOP_TIME {stop}
CC_MODE {cc}
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
CLAMP_TARGET_RATE 0
RP_TIMER 900
EWMA_GAIN 0.00390625
FAST_RECOVERY_TIMES 1
RATE_AI 50Mb/s
RATE_HAI 100Mb/s
MIN_RATE 100Mb/s
DCTCP_RATE_AI 1000Mb/s
ERROR_RATE_PER_LINK 0.0000
L2_CHUNK_SIZE 4000
L2_ACK_INTERVAL 1
L2_BACK_TO_ZERO 0
HAS_WIN 1
GLOBAL_T 1
VAR_WIN 1
FAST_REACT 1
U_TARGET 0.95
MI_THRESH 0
INT_MULTI 1
MULTI_RATE 0
SAMPLE_FEEDBACK 0
PINT_LOG_BASE 1.05
PINT_PROB 1.0
RATE_BOUND 1
ACK_HIGH_PRIO 0
LINK_DOWN 0 0 0
ENABLE_TRACE 0
KMAX_MAP {kmax}
KMIN_MAP {kmin}
PMAX_MAP {pmax}
BUFFER_SIZE {buf}
QLEN_MON_FILE {d}/qlen.txt
QLEN_MON_START {never}
QLEN_MON_END {never}
"""


def seconds(text):
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", text)
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[m.group(2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("out")
    ap.add_argument("--cc", choices=["dcqcn", "hpcc"], required=True)
    ap.add_argument("--delay", default="1us")
    ap.add_argument("--buffer-mb", type=int, default=32)
    ap.add_argument("--stop", type=float, default=1.0)
    ap.add_argument("--flow-size", type=int, default=10**9)
    ap.add_argument("--rate-mon", type=int, default=0,
                    help="sample every QP's rate every this many ns into rate.txt "
                    "(tools/hpcc/third-rate-monitor.patch)")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)

    links = list(csv.DictReader(open(os.path.join(a.run, "links.csv"))))
    hosts = set()
    switches = []
    for r in links:
        for n in r["port"].split("->"):
            if re.fullmatch(r"h\d+", n):
                hosts.add(n)
            elif n not in switches:
                switches.append(n)
    ids = {h: int(h[1:]) for h in hosts}
    assert sorted(ids.values()) == list(range(len(hosts))), "hosts are not h0..hN-1"
    for i, s in enumerate(switches):
        ids[s] = len(hosts) + i
    pairs, rates = [], set()
    for r in links:
        a_, b_ = r["port"].split("->")
        if ids[a_] < ids[b_]:
            pairs.append((ids[a_], ids[b_], int(r["rate_bps"])))
            rates.add(int(r["rate_bps"]))
    delay_ms = seconds(a.delay) * 1e3
    with open(os.path.join(out, "topology.txt"), "w") as f:
        f.write("%d %d %d\n" % (len(ids), len(switches), len(pairs)))
        f.write(" ".join(str(ids[s]) for s in switches) + "\n")
        for x, y, bps in pairs:
            f.write("%d %d %dGbps %gms 0\n" % (x, y, bps // 10**9, delay_ms))

    adj = {}
    for x, y, bps in pairs:
        adj.setdefault(x, []).append((y, bps))
        adj.setdefault(y, []).append((x, bps))
    delay_ns = round(seconds(a.delay) * 1e9)
    max_rtt = max_bdp = 0
    for h in range(len(hosts)):
        seen = {h: (0, 0, 1 << 64)}   # node: (delay, tx delay, bottleneck bps)
        queue = [h]
        for now in queue:
            d, tx, bw = seen[now]
            for nxt, bps in adj[now]:
                if nxt not in seen:
                    seen[nxt] = (d + delay_ns, tx + 1000 * 10**9 * 8 // bps, min(bw, bps))
                    if nxt >= len(hosts):
                        queue.append(nxt)
        for dst in range(len(hosts)):
            if dst != h and dst in seen:
                d, tx, bw = seen[dst]
                rtt = 2 * d + tx
                max_rtt = max(max_rtt, rtt)
                max_bdp = max(max_bdp, rtt * bw // 10**9 // 8)
    with open(os.path.join(out, "bdp.txt"), "w") as f:
        f.write("%d %d %d\n" % (max_rtt, max_bdp, max_bdp // 1000 + 1))

    flows = list(csv.DictReader(open(os.path.join(a.run, "flows.csv"))))
    flows.sort(key=lambda r: (float(r["start_s"]), int(r["id"])))
    with open(os.path.join(out, "flow.txt"), "w") as f:
        f.write("%d\n" % len(flows))
        for r in flows:
            size = int(r["size_bytes"]) if r["size_bytes"] not in ("", "0", "-1") else a.flow_size
            f.write("%d %d 3 100 %d %.9f\n" % (ids[r["src"]], ids[r["dst"]], size,
                                               float(r["start_s"])))
    with open(os.path.join(out, "trace.txt"), "w") as f:
        f.write("0\n\n")

    missing = rates - set(RED)
    assert not missing, "no RED values for %s" % missing
    used = sorted(rates)

    def m(i):
        return "%d %s" % (len(used), " ".join("%d %s" % (r, RED[r][i]) for r in used))
    with open(os.path.join(out, "config.txt"), "w") as f:
        f.write(CONFIG.format(d=out, stop="%.6f" % a.stop, cc={"dcqcn": 1, "hpcc": 3}[a.cc],
                              kmax=m(1), kmin=m(0), pmax=m(2), buf=a.buffer_mb,
                              never=int(a.stop * 1e9) + 10**9))
        if a.rate_mon:
            f.write("RATE_MON_INTERVAL %d\nRATE_MON_FILE %s/rate.txt\n" % (a.rate_mon, out))


if __name__ == "__main__":
    main()
