#!/bin/sh
# rdma-speed.sh [AISIM] - issue 10's speed criterion in deterministic counts:
# the `rdma`, `rdma-tcp` and `fattree` cases of `make bench`
# (rdma/fattree-permutation over RoCEv2 and over TCP, net/fattree-websearch)
# run whole under cachegrind, two at a time, with the
# first level as this machine's and the last level modelled as a 1 MiB L2.
# Prints, per packet-hop: instructions, first-level data misses and L2 data
# misses (docs/benchmarks.md, "Issue 10's RDMA case").  About 3 minutes of
# CPU in all on the CI-class machine.  Installs valgrind if it is missing
# (scripts/deps.sh valgrind).
set -eu
aisim=${1:-build/aisim}
"$(dirname "$0")/deps.sh" valgrind
[ -x "$aisim" ] || { echo "rdma-speed: $aisim not built (make)" >&2; exit 2; }
tmp=$(mktemp -d -t aisim-rdma-speed-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cg() {   # id scenario [--set ...]: one run under cachegrind
    id=$1 sc=$2
    shift 2
    valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 \
        --cachegrind-out-file="$tmp/$id.cg" "$aisim" run "$sc" -q --out "$tmp/$id" "$@" \
        >"$tmp/$id.log" 2>&1
}
cg rdma rdma/fattree-permutation &
cg rdma-tcp rdma/fattree-permutation --set "net.transport={cc: dctcp, min_rto: 1ms}" \
    --set "net.topology.link={rate: 100Gbps, delay: 1us, buffer: 4MB, ecn_k: 200KB}" &
wait
cg fattree net/fattree-websearch
printf '%-9s %12s %14s %12s %12s\n' case packet-hops instr/hop D1miss/hop L2miss/hop
for id in rdma rdma-tcp fattree; do
    hops=$(sed -n 's/.*"packet_hops": *\([0-9]*\).*/\1/p' "$tmp/$id/summary.json")
    # summary: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
    awk -v id="$id" -v h="$hops" '/^summary:/ {
        printf "%-9s %12d %14.1f %12.2f %12.2f\n", id, h, $2 / h, ($6 + $9) / h, ($7 + $10) / h }' \
        "$tmp/$id.cg"
done
