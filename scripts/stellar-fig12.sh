#!/bin/sh
# stellar-fig12.sh - Stellar's Fig. 12 on RoCEv2 (docs/stellar.md section
# 6): stellar/rdma-paths (two RNICs in different segments, 16 endless QPs
# for 1 ms, OBS over hashed entropy values) at 4, 8, 16, 32, 64, 128 and
# 256 paths over SEEDS seeds.  Per run, for each plane, the sender ToR's 8
# uplinks (p{0,1}.tor0.r0 -> agg): (max - min) load / 200 Gbps, the worse
# plane; printed per path count as the mean and the 95 % confidence
# half-width (Student t) over the seeds, with the goodput.
# POST=1 only recomputes the table from OUT_DIR's runs.
#   scripts/stellar-fig12.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig12, 5, 2)
set -eu
. "$(dirname "$0")/figlib.sh"
fig_args stellar-fig12 "$@"
[ "${POST:-0}" = 1 ] ||
    $AISIM sweep stellar/rdma-paths -q --force --out "$OUT/paths" --seeds "$SEEDS" --jobs "$JOBS" \
        --vary net.transport.multipath.paths=4,8,16,32,64,128,256
for d in "$OUT"/paths/*/; do
    paths=$(basename "$d" | sed 's/.*paths=\([0-9]*\).*/\1/')
    awk -F, -v paths="$paths" -v T="$(num sim_time_s "$d/summary.json")" \
        -v gp="$(num goodput_bps "$d/summary.json")" '
        $1 ~ /^p[01]\.tor0\.r0->p[01]\.agg/ {
            pl = substr($1, 2, 1); n[pl]++
            if (!(pl in lo) || $3 < lo[pl]) lo[pl] = $3
            if ($3 > hi[pl]) hi[pl] = $3 }
        END {
            a = (hi[0] - lo[0]) * 8 / T / 200e9; b = (hi[1] - lo[1]) * 8 / T / 200e9
            printf "%s\t%.4f\t%s\n", paths, (a > b ? a : b), gp }' "$d/links.csv"
done | sort -n > "$OUT/runs.tsv"
printf "| paths | imbalance (max - min) / 200 Gbps | goodput (Gbps) |\n|---|---|---|\n"
awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v scales=1,1e-9 -v precs=3,1 "$OUT/runs.tsv"
