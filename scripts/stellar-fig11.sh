#!/bin/sh
# stellar-fig11.sh - Stellar's Fig. 11 on RoCEv2 (docs/stellar.md section
# 6): stellar/rdma-lossy-allreduce (a 64 MiB hierarchical all-reduce over
# 128 GPUs, 16 servers of 8 RNICs, 4 segments, 8 channels) with one ToR uplink dropping
# 0, 1 and 3 % of its packets, for OBS over 128 paths, single path (per-QP
# ECMP, Stellar's window) and the ConnectX-7-like single path with DCQCN,
# over SEEDS seeds.  Prints per configuration and loss the bus bandwidth,
# its change against the same configuration without loss, and the PSNs
# resent, as the mean and the 95 % confidence half-width (Student t).
# POST=1 only recomputes the table from OUT_DIR's runs.
#   scripts/stellar-fig11.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig11, 5, 2)
set -eu
. "$(dirname "$0")/figlib.sh"
fig_args stellar-fig11 "$@"
if [ "${POST:-0}" != 1 ]; then
for cfg in obs single cx7; do
    case $cfg in
        cx7) set -- --set collective.transport.multipath=null ;;
        *) set -- --set collective.transport.multipath.algo=$cfg ;;
    esac
    $AISIM sweep stellar/rdma-lossy-allreduce -q --force --out "$OUT/$cfg" --seeds "$SEEDS" \
        --jobs "$JOBS" "$@" --vary 'collective.faults[0].rate=0,0.01,0.03'
done
fi
# one line per run: configuration, loss, seed, bus bandwidth, PSNs resent
for cfg in obs single cx7; do
    for d in "$OUT/$cfg"/*/; do
        rate=$(basename "$d" | sed 's/.*rate=\([0-9.]*\).*/\1/')
        seed=$(basename "$d" | sed 's/.*seed=\([0-9]*\).*/\1/')
        bus=$(awk -F, 'NR == 2 { print $10 }' "$d/collectives.csv")
        printf "%s\t%s\t%s\t%s\t%s\n" "$cfg" "$rate" "$seed" "$bus" \
            "$(num rdma_retransmits "$d/summary.json")"
    done
done > "$OUT/runs.tsv"
# per configuration and loss: bus bandwidth, its change against the same
# configuration and seed without loss (%), PSNs resent
awk -F'\t' '
    { bus[$1, $3, $2] = $4; row[++nr] = $0 }
    END {
        for (r = 1; r <= nr; r++) {
            split(row[r], f, "\t")
            ch = f[2] == 0 ? "-" : 100 * (f[4] / bus[f[1], f[3], 0] - 1)
            printf "%s, %s %% loss\t%s\t%s\t%s\n", f[1], 100 * f[2], f[4], ch, f[5]
        }
    }' "$OUT/runs.tsv" > "$OUT/table.tsv"
printf "| configuration | bus bandwidth (GB/s) | change vs no loss, same seed (%%) | PSNs resent |\n|---|---|---|---|\n"
awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v precs=2,2,0 "$OUT/table.tsv"
