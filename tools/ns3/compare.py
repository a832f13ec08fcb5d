#!/usr/bin/env python3
"""Compare aisim and ns-3 on the same flows (scripts/ns3-compare.sh).

    tools/ns3/compare.py OUTDIR

OUTDIR holds one directory per load, load-<L>/, each with:
  aisim/flows.csv, aisim/summary.json   aisim's run directory
  ns3-flows.csv, ns3-summary.txt        tools/ns3/leafspine.cc's outputs
  wall.txt                              "aisim_wall_s X" / "ns3_wall_s Y"
                                        (whole-process wall clock)
and spray/ with the same files for net/spray-permutation (long flows:
compared by throughput per flow, delivered bytes over the run's length).
Prints the tables (Markdown) and writes them to OUTDIR/results.md.
Slowdown is FCT / ideal FCT, with the ideal (empty-network) FCT of aisim's
flows.csv for both simulators.  Quantiles interpolate linearly between
order statistics, as aisim's samples_quantile does.  Python stdlib only.
"""
import csv
import json
import math
import os
import sys

BUCKETS = [("<=10KB", 0, 10000), ("10-100KB", 10000, 100000),
           ("100KB-1MB", 100000, 1000000), (">1MB", 1000000, float("inf"))]


def quantile(v, q):
    v = sorted(x for x in v if not math.isnan(x))
    if not v:
        return float("nan")
    h = (len(v) - 1) * q
    i = int(h)
    f = h - i
    return v[i] + f * (v[i + 1] - v[i]) if i + 1 < len(v) else v[i]


def read_csv(path):
    with open(path, newline="") as f:
        return {int(r["id"]): r for r in csv.DictReader(f)}


def read_kv(path):
    d = {}
    if os.path.exists(path):
        for line in open(path):
            p = line.split()
            if len(p) == 2:
                try:
                    d[p[0]] = float(p[1])
                except ValueError:
                    d[p[0]] = p[1]
    return d


def fnum(x, nd=3):
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    return f"{x:.{nd}g}" if abs(x) < 1 else f"{x:.{nd}f}".rstrip("0").rstrip(".")


def vs(x, y, fmt=fnum):
    """One table cell: aisim's value | ns-3's."""
    return f"{fmt(x)} \\| {fmt(y)}"


def pair(p50, p99):
    return f"{fnum(p50)} / {fnum(p99)}"


def analyse(d):
    a = read_csv(os.path.join(d, "aisim", "flows.csv"))
    n = read_csv(os.path.join(d, "ns3-flows.csv"))
    asum = json.load(open(os.path.join(d, "aisim", "summary.json")))
    nsum = read_kv(os.path.join(d, "ns3-summary.txt"))
    wall = read_kv(os.path.join(d, "wall.txt"))
    res = {"flows": len(a), "a_done": 0, "n_done": 0, "buckets": {}}
    all_a, all_n, all_sa, all_sn, ratios = [], [], [], [], []
    per_b = {b[0]: ([], []) for b in BUCKETS}
    for i, ra in a.items():
        size = int(ra["size_bytes"])
        ideal = float(ra["ideal_fct_s"])
        fa = float(ra["fct_s"]) if ra["fct_s"] not in ("", "nan") else float("nan")
        rn = n.get(i)
        fn = float(rn["fct_s"]) if rn and rn["fct_s"] not in ("", "nan") else float("nan")
        res["a_done"] += not math.isnan(fa)
        res["n_done"] += not math.isnan(fn)
        all_a.append(fa)
        all_n.append(fn)
        all_sa.append(fa / ideal)
        all_sn.append(fn / ideal)
        if not math.isnan(fa) and not math.isnan(fn):
            ratios.append(fn / fa)
        for name, lo, hi in BUCKETS:
            if lo < size <= hi or (lo == 0 and size <= hi):
                per_b[name][0].append(fa / ideal)
                per_b[name][1].append(fn / ideal)
    for name, _, _ in BUCKETS:
        sa, sn = per_b[name]
        res["buckets"][name] = {
            "n": len(sa), "a50": quantile(sa, .5), "a99": quantile(sa, .99),
            "n50": quantile(sn, .5), "n99": quantile(sn, .99)}
    res["fct"] = {"a50": quantile(all_a, .5), "a99": quantile(all_a, .99),
                  "n50": quantile(all_n, .5), "n99": quantile(all_n, .99)}
    res["slow"] = {"a50": quantile(all_sa, .5), "a99": quantile(all_sa, .99),
                   "n50": quantile(all_sn, .5), "n99": quantile(all_sn, .99)}
    lag = [float(r["data_start_s"]) - float(r["start_s"]) for r in n.values()
           if r.get("data_start_s") not in (None, "", "nan")]
    res["lag"] = {"p50": quantile(lag, .5), "p99": quantile(lag, .99)}
    res["ratio"] = {"p10": quantile(ratios, .1), "p50": quantile(ratios, .5),
                    "p90": quantile(ratios, .9)}
    # loss recovery per flow: flows that retransmitted / timed out, and
    # timeouts by size bucket
    def cnt(rows, col):
        return [int(r[col]) if r and r.get(col) not in (None, "", "nan") else 0
                for r in rows]
    ids = sorted(a)
    rows_a = [a[i] for i in ids]
    rows_n = [n.get(i) for i in ids]
    ra, rn = cnt(rows_a, "retransmits"), cnt(rows_n, "retransmits")
    ta, tn = cnt(rows_a, "timeouts"), cnt(rows_n, "timeouts")
    rec_n = cnt(rows_n, "recoveries")
    res["loss"] = {
        "a_rxflows": sum(x > 0 for x in ra), "n_rxflows": sum(x > 0 for x in rn),
        "a_toflows": sum(x > 0 for x in ta), "n_toflows": sum(x > 0 for x in tn),
        "both_to": sum(x > 0 and y > 0 for x, y in zip(ta, tn)),
        "n_rec": sum(rec_n), "n_recflows": sum(x > 0 for x in rec_n),
        "tos_by_bucket": {}}
    for name, lo, hi in BUCKETS:
        sel = [k for k, i in enumerate(ids)
               if lo < int(a[i]["size_bytes"]) <= hi or (lo == 0 and int(a[i]["size_bytes"]) <= hi)]
        res["loss"]["tos_by_bucket"][name] = (sum(ta[k] for k in sel), sum(tn[k] for k in sel))
    r = asum["results"]
    res["a"] = {"wall": wall.get("aisim_wall_s"), "run": asum["wall"]["seconds"],
                "events": asum["events"], "hops": r["packet_hops"], "drops": r["drops"],
                "marks": r["ecn_marks"], "retx": r["retransmits"], "tos": r["timeouts"],
                "simend": asum["sim_time_s"]}
    res["n"] = {"wall": wall.get("ns3_wall_s"), "run": nsum.get("run_wall_s"),
                "events": nsum.get("events"), "hops": nsum.get("packet_tx"),
                "drops": nsum.get("drops"), "marks": nsum.get("ecn_marks"), "dmarks": nsum.get("ecn_marks_data"),
                "retx": nsum.get("retransmits"), "tos": nsum.get("timeouts"),
                "simend": nsum.get("sim_end_s"), "sum": nsum}
    return res


def spray_table(d):
    """Rows for the spraying run: per-flow throughput and the counters."""
    asum = json.load(open(os.path.join(d, "aisim", "summary.json")))
    nsum = read_kv(os.path.join(d, "ns3-summary.txt"))
    wall = read_kv(os.path.join(d, "wall.txt"))

    def gbps(path, secs):
        return [int(r["delivered_bytes"]) * 8 / secs / 1e9 for r in read_csv(path).values()]
    ga = gbps(os.path.join(d, "aisim", "flows.csv"), asum["sim_time_s"])
    gn = gbps(os.path.join(d, "ns3-flows.csv"), nsum["sim_end_s"])
    r = asum["results"]
    mean = lambda v: sum(v) / len(v)
    L = ["\n### DCTCP over random spraying: net/spray-permutation (aisim | ns-3)\n",
         "| run ms | flows | Gbps per flow mean | min | max | drops | retransmits "
         "| timeouts | ECN marks | ns-3 fast recoveries | wall s |",
         "|---" * 11 + "|",
         f"| {fnum(asum['sim_time_s'] * 1e3)} | {len(ga)} | {vs(mean(ga), mean(gn))} | "
         f"{vs(min(ga), min(gn))} | {vs(max(ga), max(gn))} | "
         f"{vs(r['drops'], nsum.get('drops'))} | {vs(r['retransmits'], nsum.get('retransmits'))} | "
         f"{vs(r['timeouts'], nsum.get('timeouts'))} | {vs(r['ecn_marks'], nsum.get('ecn_marks'))} | "
         f"{fnum(nsum.get('fast_recoveries'))} | "
         f"{vs(wall.get('aisim_wall_s'), wall.get('ns3_wall_s'))} |"]
    return L


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    top = sys.argv[1]
    runs = []
    for e in sorted(os.listdir(top)):
        d = os.path.join(top, e)
        if e.startswith("load-") and os.path.exists(os.path.join(d, "ns3-flows.csv")):
            runs.append((e[5:], analyse(d)))
    spray = os.path.join(top, "spray")
    has_spray = os.path.exists(os.path.join(spray, "ns3-flows.csv"))
    if not runs and not has_spray:
        sys.exit(f"compare: no load-*/ or spray/ with results under {top}")
    L = []
    if has_spray:
        L += spray_table(spray)
    if not runs:
        runs_done(top, L)
        return
    L.append("### Speed (wall clock, same machine, same run)\n")
    L.append("| load | flows | aisim wall s | ns-3 wall s | ratio ns-3/aisim "
             "| aisim run s | ns-3 Run() s | run ratio | aisim events | ns-3 events |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for load, r in runs:
        a, n = r["a"], r["n"]
        ratio = n["wall"] / a["wall"] if a["wall"] and n["wall"] else float("nan")
        rr = n["run"] / a["run"] if a["run"] and n["run"] else float("nan")
        L.append(f"| {load} | {r['flows']} | {fnum(a['wall'])} | {fnum(n['wall'])} | "
                 f"**{fnum(ratio)}** | {fnum(a['run'])} | {fnum(n['run'])} | {fnum(rr)} | "
                 f"{fnum(a['events'])} | {fnum(n['events'])} |")
    L.append("\n### FCT slowdown p50 / p99 by flow size (aisim | ns-3)\n")
    hdr = "| load | " + " | ".join(f"{b[0]} (n)" for b in BUCKETS) + " | all flows |"
    L.append(hdr)
    L.append("|---" * (len(BUCKETS) + 2) + "|")
    for load, r in runs:
        cells = []
        for name, _, _ in BUCKETS:
            b = r["buckets"][name]
            cells.append(vs(pair(b['a50'], b['a99']), pair(b['n50'], b['n99']))
                         + f" ({b['n']})")
        s = r["slow"]
        cells.append(vs(pair(s['a50'], s['a99']), pair(s['n50'], s['n99'])))
        L.append(f"| {load} | " + " | ".join(cells) + " |")
    L.append("\n### Totals (aisim | ns-3)\n")
    L.append("| load | completed | FCT p50 ms | FCT p99 ms | per-flow FCT ns-3/aisim "
             "p10 / p50 / p90 | packet hops | ECN marks (ns-3: all, on data) | drops "
             "| retransmits | timeouts | last finish ms | ns-3 first data - start_s p50 / p99 us |")
    L.append("|---" * 12 + "|")
    for load, r in runs:
        a, n, f, q = r["a"], r["n"], r["fct"], r["ratio"]
        ms = lambda x: fnum(x * 1e3) if x is not None else "-"
        L.append(f"| {load} | {vs(r['a_done'], r['n_done'], str)} | "
                 f"{vs(f['a50'], f['n50'], ms)} | {vs(f['a99'], f['n99'], ms)} | "
                 f"{fnum(q['p10'])} / {fnum(q['p50'])} / {fnum(q['p90'])} | "
                 f"{vs(a['hops'], n['hops'])} | "
                 f"{vs(a['marks'], n['marks'])}, {fnum(n['dmarks'])} | "
                 f"{vs(a['drops'], n['drops'])} | {vs(a['retx'], n['retx'])} | "
                 f"{vs(a['tos'], n['tos'])} | {vs(a['simend'], n['simend'], ms)} | "
                 f"{fnum(r['lag']['p50'] * 1e6)} / {fnum(r['lag']['p99'] * 1e6)} |")
    if any(r["a"]["drops"] or r["n"]["drops"] for _, r in runs):
        L.append("\n### Loss recovery (aisim | ns-3)\n")
        L.append("| load | drops | retransmits | retransmits / drop | flows retransmitting "
                 "| timeouts | flows with a timeout (in both) | timeouts by bucket "
                 + " / ".join(b[0] for b in BUCKETS) + " | ns-3 fast recoveries (flows) |")
        L.append("|---" * 9 + "|")
        for load, r in runs:
            a, n, lo = r["a"], r["n"], r["loss"]
            rpd = lambda x: fnum(x["retx"] / x["drops"]) if x["drops"] else "-"
            tb = " / ".join(vs(x, y, str) for x, y in lo["tos_by_bucket"].values())
            L.append(f"| {load} | {vs(a['drops'], n['drops'])} | "
                     f"{vs(a['retx'], n['retx'])} | {vs(a, n, rpd)} | "
                     f"{vs(lo['a_rxflows'], lo['n_rxflows'], str)} | "
                     f"{vs(a['tos'], n['tos'])} | "
                     f"{vs(lo['a_toflows'], lo['n_toflows'], str)} ({lo['both_to']}) | {tb} | "
                     f"{lo['n_rec']} ({lo['n_recflows']}) |")
        if any("timeouts_from_recovery" in r["n"]["sum"] for _, r in runs):
            L.append("\n### ns-3's timeouts by the state they interrupted\n")
            L.append("| load | timeouts | from open / disorder (too few dupacks, tail) "
                     "| from fast recovery | from loss (a timeout again) "
                     "| resending a segment already retransmitted |")
            L.append("|---" * 6 + "|")
            for load, r in runs:
                s = r["n"]["sum"]
                L.append(f"| {load} | {fnum(r['n']['tos'])} | "
                         f"{fnum(s.get('timeouts_from_open_disorder'))} | "
                         f"{fnum(s.get('timeouts_from_recovery'))} | "
                         f"{fnum(s.get('timeouts_from_loss'))} | "
                         f"{fnum(s.get('timeouts_resending_a_retransmission'))} |")
    runs_done(top, L)


def runs_done(top, L):
    text = "\n".join(L) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(top, "results.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
