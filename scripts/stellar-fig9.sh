#!/bin/sh
# stellar-fig9.sh - Stellar's Fig. 9 on RoCEv2 at the paper's scale
# (docs/stellar.md section 6): the 120 RDMA WRITEs of
# stellar/rdma-permutation-30 (30 servers, 4 RNICs each, two segments) for
# every path-choice algorithm at 4 and 128 paths, and the three baselines
# (single path with per-QP ECMP is `algo: single`; multi-QP ECMP,
# stellar/rdma-permutation-30-multiqp; ConnectX-7-like single path with
# DCQCN, `multipath: null`), over SEEDS seeds.  Per configuration it prints
# the ToR uplinks' time-averaged queue (queue_stats.csv: sampled every 2 us
# over the run; averaged over the uplinks that queued at all, and the
# hottest uplink's), the mean over the 240 uplinks of their largest queue
# and the largest of all, the FCT p99 and the goodput, each as the mean
# and the 95 % confidence half-width (Student t) over the seeds.
# POST=1 only recomputes the table from OUT_DIR's runs.
#   scripts/stellar-fig9.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig9, 5, 2)
set -eu
. "$(dirname "$0")/figlib.sh"
fig_args stellar-fig9 "$@"
if [ "${POST:-0}" != 1 ]; then
$AISIM sweep stellar/rdma-permutation-30 -q --force --out "$OUT/mp" --seeds "$SEEDS" --jobs "$JOBS" \
    --vary net.transport.multipath.paths=128,4 \
    --vary net.transport.multipath.algo=obs,rr,dwrr,mprdma,bestrtt,single
$AISIM sweep stellar/rdma-permutation-30-multiqp -q --force --out "$OUT/multiqp" --seeds "$SEEDS" \
    --jobs "$JOBS" --vary net.transport.multipath.algo=single
$AISIM sweep stellar/rdma-permutation-30 -q --force --out "$OUT/cx7" --seeds "$SEEDS" --jobs "$JOBS" \
    --set net.transport.multipath=null --vary net.transport.cc=dcqcn
fi
# one line per run: configuration, uplinks' time-averaged queue (mean), their
# largest queue (mean and max), FCT p99, goodput
for d in "$OUT"/mp/*/ "$OUT"/multiqp/*/ "$OUT"/cx7/*/; do
    name=$(basename "$d" | sed 's/,seed=[0-9]*//')
    case "$d" in
        */multiqp/*) name="multi-QP ECMP (4 QPs, single)" ;;
        */cx7/*) name="CX7-like DCQCN" ;;
    esac
    awk -F, -v name="$name" -v p99="$(num fct_p99_s "$d/summary.json")" \
        -v gp="$(num goodput_bps "$d/summary.json")" '
        FNR == 1 { next }
        { n++; s += $5; if ($5 > m) m = $5; if ($3 > h) h = $3 }
        $5 > 0 { nb++; a += $3 }
        END { printf "%s\t%.1f\t%.1f\t%.0f\t%.0f\t%s\t%s\n", name, nb ? a / nb : 0, h, s / n, m,
                     p99, gp }' "$d/queue_stats.csv"
done > "$OUT/runs.tsv"
printf "| configuration | uplink queue, time average (KB) | hottest uplink, time average (KB) | uplink max queue, mean (KB) | largest (KB) | FCT p99 (us) | goodput (Tbps) |\n|---|---|---|---|---|---|---|\n"
awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v scales=1e-3,1e-3,1e-3,1e-3,1e6,1e-12 -v precs=2 \
    "$OUT/runs.tsv"
