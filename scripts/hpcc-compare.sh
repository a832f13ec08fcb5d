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
#   CASES    cases to run  ["fattree-dcqcn fattree-hpcc websearch-dcqcn websearch-hpcc twotoone-dcqcn"]
#   JOBS     make's parallelism for the fork's build        [-j2]
#
# Installs g++, patch and time when missing (scripts/deps.sh hpcc).  Not
# part of `make test`: the fork's build takes minutes.
set -eu

cd "$(dirname "$0")/.."
SRC=${1:-${HPCC_SRC:-}}
OUT=${2:-out/hpcc-compare}
ROUNDS=${ROUNDS:-3}
CASES=${CASES:-"fattree-dcqcn fattree-hpcc websearch-dcqcn websearch-hpcc twotoone-dcqcn"}
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
    t_prog=$1 t_round=$2 t_file=$3
    shift 3
    /usr/bin/time -o "$t_file.t" -f "%e %U %S %M" "$@"
    echo "$t_prog $t_round $(cat "$t_file.t")" >> "$t_file"
    rm -f "$t_file.t"
}

# --- (ii) cases ------------------------------------------------------------------
# run_case NAME SCENARIO FORK_STOP_S POOL_MIB LINK_KEY...: a first aisim run
# (untimed) gives the network and the flows, which tools/hpcc/scenario.py
# writes out for the fork with its published defaults; then each round runs
# aisim with the fork's settings where aisim has the knob (below), for DCQCN
# the same without the window, aisim on the scenario as committed, and the
# fork, in turn.  The fork's settings:
# switches mark at dequeue; PFC from one pool of POOL_MIB per switch with
# the threshold 1/8 of the free pool (the fork's USE_DYNAMIC_PFC_THRESHOLD,
# pfc_a_shift 3) and resume 3 KB below it, the static XOFF above it never
# reached; DCQCN QPs limited to the fork's window (HAS_WIN 1, GLOBAL_T 1,
# VAR_WIN 1: aisim's `window: bdp` with the fork's maxBdp as window_bytes;
# var_window is on by default).  With RATE_MON > 0 the fork samples
# every QP's rate every RATE_MON ns (as aisim's rdma_rate.csv).
run_case() {
    name=$1 scen=$2 stop=$3 pool=$4
    shift 4
    d=$OUT/$name
    rm -rf "$d"
    mkdir -p "$d"
    cc=dcqcn
    case $name in *hpcc) cc=hpcc ;; esac
    # shellcheck disable=SC2046 # one word per option, none with spaces
    set -- $(for k in "$@"; do
        printf -- '--set net.topology.%s.%s ' "$k" "buffer=${pool}MiB" \
            "$k" "pfc_xoff=$((pool - 1))MiB" "$k" "pfc_xon=$(((pool - 1) * 1048576 - 3000))B"
    done)
    set -- "$@" --set net.topology.mark_at=dequeue --set "net.topology.shared_buffer.size=${pool}MiB" \
        --set net.topology.shared_buffer.pfc_alpha=0.125
    build/aisim run "$scen" -q --out "$d/first" --seed 1 --set net.transport.cc=$cc > /dev/null
    python3 tools/hpcc/scenario.py "$d/first" "$d/fork" --cc $cc --stop "$stop" --buffer-mb "$pool" \
        --rate-mon "${RATE_MON:-0}"
    rm -rf "$d/first"
    echo "$*" > "$d/aisim-settings.txt"
    win="" winb=""
    if [ $cc = dcqcn ]; then
        win="net.transport.window=bdp"
        winb="net.transport.window_bytes=$(cut -d' ' -f2 "$d/fork/bdp.txt")B"
        echo "--set $win --set $winb (not in aisim-nowin)" >> "$d/aisim-settings.txt"
    fi
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        echo "hpcc-compare: $name round $r: aisim (the fork's settings, without the window, as committed), HPCC fork" >&2
        rm -rf "$d/aisim" "$d/aisim-nowin" "$d/aisim-asis"
        timed aisim "$r" "$d/times.txt" build/aisim run "$scen" -q --out "$d/aisim" --seed 1 \
            --set net.transport.cc=$cc ${win:+--set "$win" --set "$winb"} "$@" > "$d/aisim.log"
        if [ -n "$win" ]; then
            timed aisim-nowin "$r" "$d/times.txt" build/aisim run "$scen" -q --out \
                "$d/aisim-nowin" --seed 1 --set net.transport.cc=$cc "$@" > "$d/aisim-nowin.log"
        fi
        timed aisim-asis "$r" "$d/times.txt" build/aisim run "$scen" -q --out "$d/aisim-asis" \
            --seed 1 --set net.transport.cc=$cc > "$d/aisim-asis.log"
        timed fork "$r" "$d/times.txt" "$FORK" "$d/fork/config.txt" > "$d/fork.log"
        r=$((r + 1))
    done
}

for c in $CASES; do
    case $c in
    # 2 MB permutation, k = 8, 100 Gbps: 8 ports x 4 MB = the fork's 32 MB.
    fattree-*) run_case "$c" rdma/fattree-permutation 0.02 32 link ;;
    # web-search at 50 % load, 10 ms of arrivals: a leaf's 8 x 1 MB + 2 x 2 MB.
    websearch-*) run_case "$c" rdma/websearch-leafspine 0.2 12 host_link fabric_link ;;
    # two long QPs into one port, 40 ms, rates every 50 us: 3 ports x 32 MB.
    twotoone-*) RATE_MON=50000; run_case "$c" rdma/dcqcn-two-to-one 0.04 96 link; RATE_MON=0 ;;
    *) echo "hpcc-compare: unknown case $c" >&2; exit 2 ;;
    esac
done

# --- (iii) table -------------------------------------------------------------------
python3 tools/hpcc/compare.py "$OUT" > "$OUT/results.md"
cat "$OUT/results.md"
