#!/bin/sh
# rdma-speed.sh [AISIM] - issue 10's speed criterion in deterministic counts:
# the `rdma` and `fattree` cases of `make bench` (rdma/fattree-permutation,
# net/fattree-websearch) run whole under cachegrind, both at once, with the
# first level as this machine's and the last level modelled as a 1 MiB L2.
# Prints, per packet-hop: instructions, first-level data misses and L2 data
# misses (docs/benchmarks.md, "Issue 10's RDMA case").  About 2 minutes of
# CPU in all on the CI-class machine.  Installs valgrind if it is missing
# (scripts/deps.sh valgrind).
set -eu
aisim=${1:-build/aisim}
"$(dirname "$0")/deps.sh" valgrind
[ -x "$aisim" ] || { echo "rdma-speed: $aisim not built (make)" >&2; exit 2; }
tmp=$(mktemp -d -t aisim-rdma-speed-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for c in rdma:rdma/fattree-permutation fattree:net/fattree-websearch; do
    id=${c%%:*}
    valgrind --tool=cachegrind --cache-sim=yes --LL=1048576,16,64 \
        --cachegrind-out-file="$tmp/$id.cg" "$aisim" run "${c#*:}" -q --out "$tmp/$id" \
        >"$tmp/$id.log" 2>&1 &
done
wait
printf '%-8s %12s %14s %12s %12s\n' case packet-hops instr/hop D1miss/hop L2miss/hop
for id in rdma fattree; do
    hops=$(sed -n 's/.*"packet_hops": *\([0-9]*\).*/\1/p' "$tmp/$id/summary.json")
    # summary: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
    awk -v id="$id" -v h="$hops" '/^summary:/ {
        printf "%-8s %12d %14.1f %12.2f %12.2f\n", id, h, $2 / h, ($6 + $9) / h, ($7 + $10) / h }' \
        "$tmp/$id.cg"
done
