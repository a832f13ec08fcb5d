#!/usr/bin/env python3
"""birp_sweep.py - the sweeps behind docs/birp.md's tables (not run in CI).

Runs `aisim run examples/birp/paper.yaml` for every point of the chosen
sweeps with seeds 1..N and prints, per sweep, markdown tables of the mean and
the 95 % confidence half-width (Student t, N - 1 degrees of freedom, as
stat_t975() in src/core/stats.c) of the inference loss, the SLO failure rate
and the p99 response time, overall and per request class, next to each other.

    scripts/birp_sweep.py OUT [--seeds 5] [--jobs 2] [--aisim build/aisim] SWEEP...

SWEEP is one of: load, slo, skew, gamma, switch, ablate (see SWEEPS below).
Runs already in OUT (their summary.json exists) are reused, so an
interrupted sweep resumes; OUT/<sweep>.md receives the tables.
"""
import argparse
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SCEN = "examples/birp/paper.yaml"
ALL = ["birp", "birp_static", "batch_only", "clipper", "triton", "model_selection"]
MAIN = ["birp", "clipper", "triton", "model_selection"]
SLO = {"tight": ("50ms", "100ms", "250ms"), "paper": ("100ms", "200ms", "500ms"),
       "loose": ("200ms", "400ms", "1s")}
SKEW = {"even": "[1, 1, 1]", "nano 60%": "[0.6, 0.2, 0.2]", "nano 80%": "[0.8, 0.1, 0.1]",
        "orin 80%": "[0.1, 0.1, 0.8]"}


def pol(p):
    return ["birp.policy=" + p]


# Each sweep: (x label, [(x, sets)], [(column, sets)]).
SWEEPS = {
    "load": ("load", [(f"{x}x", [f"birp.workload.load={x}"]) for x in (0.5, 1, 1.5, 2, 2.5, 3)],
             [(p, pol(p)) for p in ALL]),
    "slo": ("SLOs (detect / classify / archive)",
            [(f"{k}: {' / '.join(v)}", [f"birp.classes[{i}].slo={s}" for i, s in enumerate(v)]
              + ["birp.workload.load=2"]) for k, v in SLO.items()],
            [(p, pol(p)) for p in MAIN + ["batch_only"]]),
    "skew": ("origin shares (nano, xavier, orin) at 2x",
             [(k, [f"birp.workload.origin_shares={v}", "birp.workload.load=2"])
              for k, v in SKEW.items()],
             [(p, pol(p)) for p in MAIN + ["batch_only"]]),
    "gamma": ("parallel_penalty gamma at 2x",
              [(f"{g}", [f"birp.parallel_penalty={g}", "birp.workload.load=2"])
               for g in (0, 0.3, 0.6, 1)],
              [(p, pol(p)) for p in MAIN]),
    "switch": ("model switching",
               [(f"{k} at {x}x", s + [f"birp.workload.load={x}"]) for x in (3,)
                for k, s in (("free", ["birp.switch_cost=false"]), ("default (0.1 s + size / 2 Gbps)", []),
                             ("1 s setup", ["birp.load_setup=1s"]))],
               [(p, pol(p)) for p in MAIN]),
    "ablate": ("load",
               [(f"{x}x", [f"birp.workload.load={x}"]) for x in (2, 3)],
               [("birp", pol("birp")),
                ("birp, AIMD batching", pol("birp") + ["birp.batcher=aimd"]),
                ("birp, Triton batching", pol("birp") + ["birp.batcher=triton"]),
                ("birp_static", pol("birp_static")),
                ("birp_static, profile TIR (oracle)", pol("birp_static") + ["birp.tir=profile"]),
                ("clipper", pol("clipper"))]),
}

T975 = [0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262]


def mean_ci(v):
    v = [x for x in v if x is not None and not (isinstance(x, float) and math.isnan(x))]
    n = len(v)
    if n == 0:
        return None, None
    m = sum(v) / n
    if n < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    t = T975[n - 1] if n - 1 < len(T975) else 1.96
    return m, t * sd / math.sqrt(n)


def run_one(aisim, out, sets, seed):
    d = os.path.join(out, "runs", "_".join(s.replace("/", "-").replace(" ", "") for s in sets)
                     + f"_s{seed}")
    f = os.path.join(d, "summary.json")
    if not os.path.exists(f):
        cmd = [aisim, "run", SCEN, "-q", "--force", "--seed", str(seed), "--out", d]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            sys.exit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    with open(f) as fp:
        return json.load(fp)["results"]


def cell(vals, scale, prec):
    m, h = mean_ci(vals)
    if m is None:
        return "-"
    return f"{m * scale:.{prec}f} ± {h * scale:.{prec}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("sweeps", nargs="+", choices=sorted(SWEEPS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--aisim", default="build/aisim")
    a = ap.parse_args()
    for name in a.sweeps:
        xlab, xs, cols = SWEEPS[name]
        jobs = [(x, c, seed, xset + cset) for x, xset in xs for c, cset in cols
                for seed in range(1, a.seeds + 1)]
        with ThreadPoolExecutor(a.jobs) as ex:
            res = list(ex.map(lambda j: run_one(a.aisim, a.out, j[3], j[2]), jobs))
        R = {}
        for (x, c, seed, _), r in zip(jobs, res):
            R.setdefault((x, c), []).append(r)
        lines = [f"## {name} ({a.seeds} seeds, mean ± 95 % CI)", ""]
        metrics = [("inference loss", lambda r: r["inference_loss"], 1, 4),
                   ("SLO failure rate, %", lambda r: r["slo_failure_rate"], 100, 3),
                   ("p99 response time, ms", lambda r: r["latency_p99_s"], 1e3, 1),
                   ("served top-1, %", lambda r: r["served_accuracy"], 100, 2)]
        for title, f, sc, pr in metrics:
            lines += [f"{title}:", "", f"| {xlab} | " + " | ".join(f"`{c}`" if " " not in c else c
                                                              for c, _ in cols) + " |",
                      "|---" * (len(cols) + 1) + "|"]
            for x, _ in xs:
                lines.append(f"| {x} | " + " | ".join(cell([f(r) for r in R[(x, c)]], sc, pr)
                                                     for c, _ in cols) + " |")
            lines.append("")
        classes = list(res[0]["classes"].keys())
        lines += ["Per class: loss / SLO failures % / p99 ms (means over the seeds):", "",
                  f"| {xlab} | class | " + " | ".join(c for c, _ in cols) + " |",
                  "|---" * (len(cols) + 2) + "|"]
        for x, _ in xs:
            for k in classes:
                row = []
                for c, _ in cols:
                    rs = [r["classes"][k] for r in R[(x, c)]]
                    lo, _ = mean_ci([r["inference_loss"] for r in rs])
                    sf, _ = mean_ci([r["slo_failure_rate"] for r in rs])
                    p9, _ = mean_ci([r["latency_p99_s"] for r in rs])
                    row.append(f"{lo:.4f} / {100 * sf:.2f} / {1e3 * p9:.0f}" if lo is not None
                               else "-")
                lines.append(f"| {x} | {k} | " + " | ".join(row) + " |")
        lines.append("")
        text = "\n".join(lines)
        with open(os.path.join(a.out, f"{name}.md"), "w") as fp:
            fp.write(text + "\n")
        print(text)


if __name__ == "__main__":
    main()
