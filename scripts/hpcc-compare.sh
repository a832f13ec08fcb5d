#!/bin/sh
# aisim against the HPCC ns-3 fork (alibaba-edu/High-Precision-Congestion-
# Control, an ns-3.17 derivative; the network inside SimAI): build the
# fork's scratch/third.cc without waf (tools/hpcc/build.py), run aisim's
# RDMA scenarios, replay each run's network and flows in the fork
# (tools/hpcc/scenario.py writes its topology, flow and config files), time
# both alternately, and write OUT/results.md (tools/hpcc/compare.py).
# See docs/rdma.md, "Against the HPCC ns-3 fork".
#
#   scripts/hpcc-compare.sh [HPCC_SRC] [OUTDIR]    default OUTDIR: out/hpcc-compare
#
# HPCC_SRC (argument or environment) is a checkout of the fork, e.g.
#   git clone https://github.com/alibaba-edu/High-Precision-Congestion-Control
# (docs/rdma.md names the commit measured).  Environment (defaults in brackets):
#   ROUNDS   timed rounds, aisim and the fork alternating   [3]
#   CASES    cases to run                                   ["fattree-dcqcn fattree-hpcc websearch-dcqcn websearch-hpcc"]
#   JOBS     make's parallelism for the fork's build        [-j2]
#
# Installs g++, patch and time when missing (scripts/deps.sh hpcc).  Not
# part of `make test`: the fork's build takes minutes.
set -eu

cd "$(dirname "$0")/.."
SRC=${1:-${HPCC_SRC:-}}
OUT=${2:-out/hpcc-compare}
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-"fattree-dcqcn fattree-hpcc websearch-dcqcn websearch-hpcc"}
JOBS=${JOBS:--j2}
if [ -z "$SRC" ] || [ ! -f "$SRC/simulation/scratch/third.cc" ]; then
    echo "hpcc-compare: give the fork's checkout (HPCC_SRC or the first argument)" >&2
    exit 2
fi

# --- (i) dependencies and builds ----------------------------------------------
scripts/deps.sh hpcc
make
mkdir -p "$OUT"
python3 tools/hpcc/build.py "$SRC/simulation" "$OUT/fork-build" "$JOBS" > "$OUT/fork-build.log"
FORK=$OUT/fork-build/third
{
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "aisim_commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "fork_commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "fork_cxx $(g++ --version | head -1)"
    echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "nproc $(nproc)"
    echo "rounds $ROUNDS"
} > "$OUT/machine.txt"

# timed NAME ROUND TIMES CMD...: run CMD under /usr/bin/time, append a line.
timed() {
    name=$1 round=$2 times=$3
    shift 3
    /usr/bin/time -o "$times.t" -f "%e %U %S %M" "$@"
    echo "$name $round $(cat "$times.t")" >> "$times"
    rm -f "$times.t"
}

# --- (ii) cases ------------------------------------------------------------------
# case NAME SCENARIO FORK_STOP_S BUFFER_MB [aisim --set ...]: aisim runs the
# scenario (switches marking at dequeue, as the fork's), the fork the same
# network and flows with its published defaults.
run_case() {
    name=$1 scen=$2 stop=$3 buf=$4
    shift 4
    d=$OUT/$name
    rm -rf "$d"
    mkdir -p "$d"
    cc=dcqcn
    case $name in *hpcc) cc=hpcc ;; esac
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        echo "hpcc-compare: $name round $r: aisim" >&2
        rm -rf "$d/aisim"
        timed aisim "$r" "$d/times.txt" build/aisim run "$scen" -q --out "$d/aisim" --seed 1 \
            --set net.topology.mark_at=dequeue --set net.transport.cc=$cc "$@" > "$d/aisim.log"
        if [ "$r" = 1 ]; then
            python3 tools/hpcc/scenario.py "$d/aisim" "$d/fork" --cc $cc --stop "$stop" \
                --buffer-mb "$buf"
        fi
        echo "hpcc-compare: $name round $r: HPCC fork" >&2
        timed fork "$r" "$d/times.txt" "$FORK" "$d/fork/config.txt" > "$d/fork.log"
        r=$((r + 1))
    done
}

for c in $CASES; do
    case $c in
    # 2 MB permutation, k = 8, 100 Gbps: 8 ports x 4 MB = the fork's 32 MB.
    fattree-*) run_case "$c" rdma/fattree-permutation 0.02 32 ;;
    # web-search at 50 % load, 10 ms of arrivals: a leaf's 8 x 1 MB + 2 x 2 MB.
    websearch-*) run_case "$c" rdma/websearch-leafspine 0.2 12 ;;
    *) echo "hpcc-compare: unknown case $c" >&2; exit 2 ;;
    esac
done

# --- (iii) table -------------------------------------------------------------------
python3 tools/hpcc/compare.py "$OUT" > "$OUT/results.md"
cat "$OUT/results.md"
