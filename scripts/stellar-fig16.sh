#!/bin/sh
# stellar-fig16.sh - Stellar's Fig. 16, scaled (docs/stellar.md, "Fig. 16"):
# training iteration time with Stellar's multi-path RDMA against the
# single-path baselines, for rail-aligned ("re-ranked") and random
# placement, over SEEDS seeds (random placement, ECMP hashes and QP planes
# are drawn from the seed).
#  - packet plane, stellar/fig16-training (two jobs on 128 GPUs): OBS-128,
#    single path (Stellar's CC, per-QP ECMP), CX7-like (DCQCN, one path);
# Prints the iteration time per job (mean +- 95 % CI, Student t,
# scripts/meanci.awk) and the gain of OBS-128 over each baseline,
# (T_base - T_obs) / T_base, over jobs and seeds: mean +- CI and largest.
#   scripts/stellar-fig16.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig16, 5, 2)
set -eu
. "$(dirname "$0")/figlib.sh"
fig_args stellar-fig16 "$@"
for pl in random rail_aligned; do
    P="--set training.jobs[0].placement=$pl --set training.jobs[1].placement=$pl"
    $AISIM sweep stellar/fig16-training -q --force --jobs "$JOBS" --seeds "$SEEDS" \
        --out "$OUT/packet-$pl-mp" $P --vary training.transport.multipath.algo=obs,single
    $AISIM sweep stellar/fig16-training -q --force --jobs "$JOBS" --seeds "$SEEDS" \
        --out "$OUT/packet-$pl-cx7" $P --set training.transport.multipath=null \
        --vary training.transport.cc=dcqcn
done
# One line per job and run: plane, placement, transport, seed, job, iteration (s).
for d in "$OUT"/*/*/; do
    [ -f "$d/jobs.csv" ] || continue
    set -- $(echo "$d" | sed 's|.*/\([a-z]*\)-\([a-z_]*\)-*[a-z0-9]*/\(.*\)/$|\1 \2 \3|')
    plane=$1 pl=$2 point=$3
    seed=$(echo "$point" | sed 's/.*seed=//')
    case "$point" in
        *cc=dcqcn*) tr="CX7-like" ;; *algo=obs*) tr="OBS-128" ;; *algo=single*) tr="single" ;;
        *routing=spray_rr*) tr="spray" ;; *routing=ecmp*) tr="ECMP" ;; *) tr="?" ;;
    esac
    awk -F, -v p="$plane" -v pl="$pl" -v tr="$tr" -v s="$seed" \
        'NR > 1 { printf "%s\t%s\t%s\t%s\t%s\t%s\n", p, pl, tr, s, $1, $8 }' "$d/jobs.csv"
done > "$OUT/runs.tsv"
# Iteration time per (placement, transport, job), in ms.
awk -F'\t' '{ printf "%s, %s, job %s\t%s\n", $2, $3, $5, $6 }' "$OUT/runs.tsv" > "$OUT/iter.tsv"
# Gain of OBS-128 over each baseline per (placement, seed, job), in %.
awk -F'\t' '{ T[$2, $3, $4, $5] = $6; if (!(($2, $4, $5) in seen)) { seen[$2, $4, $5] = 1; r[++n] = $2 SUBSEP $4 SUBSEP $5 } }
    END { for (i = 1; i <= n; i++) { split(r[i], f, SUBSEP)
            for (x = 1; x <= 2; x++) { b = x == 1 ? "single" : "CX7-like"
              if (((f[1], "OBS-128", f[2], f[3]) in T) && ((f[1], b, f[2], f[3]) in T))
                printf "%s, OBS-128 vs %s\t%s\n", f[1], b,
                       100 * (T[f[1], b, f[2], f[3]] - T[f[1], "OBS-128", f[2], f[3]]) / T[f[1], b, f[2], f[3]] } } }' \
    "$OUT/runs.tsv" > "$OUT/gain.tsv"
{
    printf '| placement, transport, job | iteration (ms) |\n|---|---|\n'
    awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v scales=1e3 -v precs=3 "$OUT/iter.tsv"
    printf '\n| placement, comparison (jobs x seeds) | mean gain (%%) | largest (%%) |\n|---|---|---|\n'
    awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v precs=2 "$OUT/gain.tsv" > "$OUT/gain.md"
    awk -F'\t' '{ if (!($1 in m) || $2 > m[$1]) m[$1] = $2 } END { for (k in m) printf "%s\t%.2f\n", k, m[k] }' \
        "$OUT/gain.tsv" > "$OUT/gainmax.tsv"
    while IFS= read -r line; do
        k=$(echo "$line" | sed 's/^| \(.*\) (n=.*/\1/')
        printf '%s | %s |\n' "$line" "$(awk -F'\t' -v k="$k" '$1 == k { print $2 }' "$OUT/gainmax.tsv")" | sed 's/ | | / | /'
    done < "$OUT/gain.md"
} | tee "$OUT/tables.md"
