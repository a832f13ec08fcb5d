#!/bin/sh
# aisim against ns-3 3.37 on the reference network scenario
# (examples/net/leafspine-websearch.yaml): for each load, run aisim, replay
# its flows.csv in ns-3 (tools/ns3/leafspine.cc), time both, and compare FCT
# slowdowns by flow size.  Then DCTCP over random per-packet spraying
# (examples/net/spray-permutation.yaml: long flows, compared by per-flow
# throughput, drops and retransmissions).  See docs/ns3-comparison.md.
#
#   scripts/ns3-compare.sh [OUTDIR]          default OUTDIR: out/ns3-compare
#
# Environment (defaults in brackets):
#   LOADS     loads to run, "" for none      ["0.3 0.5 0.8"]
#   DURATION  arrival window of each run    [100ms]
#   SEED      aisim's run seed               [1]
#   CC        congestion control: dctcp, or newreno (no ECN, so the ports
#             are pure drop-tail and loss recovery is exercised)  [dctcp]
#   SPRAY_STOP  length of the spraying run, or 0 to skip it  [5ms]
#             (ns-3 takes about 2 CPU minutes for 5 ms; LOADS="" runs the
#             spraying case alone)
#   NS3_ARGS  extra arguments to the ns-3 program, e.g. "--scheduler=heap"
#
# Installs ns3, libns3-dev (and what linking against it needs), g++ and
# pkg-config when missing, with sudo when not root, as scripts/deps.sh does.
# Not part of `make test`: ns-3 is large and the runs take minutes.
set -eu

cd "$(dirname "$0")/.."
OUT=${1:-out/ns3-compare}
LOADS=${LOADS-"0.3 0.5 0.8"}   # set but empty: no web-search run
DURATION=${DURATION:-100ms}
SEED=${SEED:-1}
CC=${CC:-dctcp}
case $CC in
    dctcp|newreno) ;;
    *) echo "ns3-compare: CC must be dctcp or newreno" >&2; exit 2 ;;
esac
NS3_ARGS=${NS3_ARGS:-}
SPRAY_STOP=${SPRAY_STOP:-5ms}

# --- (i) dependencies --------------------------------------------------------
scripts/deps.sh ns3

# --- (ii) build ---------------------------------------------------------------
make
NS3_MODS="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-traffic-control ns3-applications"
mkdir -p build/ns3
if [ ! -x build/ns3/leafspine ] || [ tools/ns3/leafspine.cc -nt build/ns3/leafspine ]; then
    echo "ns3-compare: building build/ns3/leafspine" >&2
    # shellcheck disable=SC2046,SC2086
    g++ -O2 -std=c++17 -o build/ns3/leafspine tools/ns3/leafspine.cc \
        $(pkg-config --cflags --libs $NS3_MODS)
fi

now() { date +%s.%N; }
# walls DIR T0 T1 T2: aisim ran from T0 to T1, ns-3 from T1 to T2.
walls() {
    python3 -c "import sys; a,b,c=map(float,sys.argv[1:]); \
print('aisim_wall_s %.6f\nns3_wall_s %.6f' % (b-a, c-b))" "$2" "$3" "$4" > "$1/wall.txt"
    cat "$1/wall.txt" >&2
}
# fresh DIR: an empty run directory.
fresh() { rm -rf "$1"; mkdir -p "$1"; }

# --- (iii) runs -----------------------------------------------------------------
mkdir -p "$OUT"
{
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "aisim_commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "ns3 $(dpkg-query -W -f='${Version}' libns3-dev)"
    echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "nproc $(nproc)"
    echo "loads $LOADS duration $DURATION seed $SEED cc $CC ns3_args $NS3_ARGS spray_stop $SPRAY_STOP"
} > "$OUT/machine.txt"

for load in $LOADS; do
    d="$OUT/load-$load"
    fresh "$d"
    echo "ns3-compare: load $load, $DURATION of arrivals: aisim" >&2
    t0=$(now)
    build/aisim run net/leafspine-websearch -q --out "$d/aisim" --seed "$SEED" \
        --set net.background.load="$load" --set net.background.duration="$DURATION" \
        --set net.transport.cc="$CC" > "$d/aisim.log"
    t1=$(now)
    echo "ns3-compare: load $load: ns-3 on aisim's $(($(wc -l < "$d/aisim/flows.csv") - 1)) flows" >&2
    # shellcheck disable=SC2086
    build/ns3/leafspine --flows="$d/aisim/flows.csv" --out="$d/ns3-flows.csv" \
        --summary="$d/ns3-summary.txt" --cc="$CC" $NS3_ARGS > "$d/ns3.log"
    t2=$(now)
    walls "$d" "$t0" "$t1" "$t2"
done

# --- (iv) random spraying -------------------------------------------------------
# ns-3's network is examples/net/spray-permutation.yaml's: 4 leaves x 8 hosts,
# 8 spines, every link 100 Gbps / 1 us, 1.5 MB and K = 200 KB per port.
if [ "$SPRAY_STOP" != 0 ]; then
    d="$OUT/spray"
    fresh "$d"
    echo "ns3-compare: net/spray-permutation, $SPRAY_STOP: aisim" >&2
    t0=$(now)
    build/aisim run net/spray-permutation -q --out "$d/aisim" --seed "$SEED" \
        --set stop="$SPRAY_STOP" > "$d/aisim.log"
    t1=$(now)
    stop_s=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['sim_time_s'])" \
        "$d/aisim/summary.json")
    echo "ns3-compare: net/spray-permutation: ns-3" >&2
    # shellcheck disable=SC2086
    build/ns3/leafspine --flows="$d/aisim/flows.csv" --out="$d/ns3-flows.csv" \
        --summary="$d/ns3-summary.txt" --cc=dctcp --routing=spray_random --stop="$stop_s" \
        --leaves=4 --spines=8 --hostsPerLeaf=8 --hostGbps=100 --fabricGbps=100 \
        --hostBuf=1500000 --fabricBuf=1500000 --hostK=200000 --fabricK=200000 \
        $NS3_ARGS > "$d/ns3.log" || true     # exit 1: long flows never complete
    t2=$(now)
    walls "$d" "$t0" "$t1" "$t2"
fi

# --- (v) table ------------------------------------------------------------------
cat "$OUT/machine.txt"
echo
python3 tools/ns3/compare.py "$OUT"
