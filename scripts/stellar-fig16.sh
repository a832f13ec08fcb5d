#!/bin/sh
# stellar-fig16.sh - Stellar's Fig. 16, scaled (docs/stellar.md, "Fig. 16"):
# training iteration time with Stellar's multi-path RDMA against the
# single-path baselines, for rail-aligned ("re-ranked") and random
# placement, over SEEDS seeds (random placement, ECMP hashes and QP planes
# are drawn from the seed).
#  - packet plane, stellar/fig16-training (two jobs on 128 GPUs): OBS-128,
#    single path (Stellar's CC, per-QP ECMP), CX7-like (DCQCN, one path);
# Prints the iteration time per job (mean +- 95 % CI, Student t) and the
# gain of multi-path over each baseline, (T_base - T_mp) / T_base, averaged
# over jobs and seeds, with its largest value.
#   scripts/stellar-fig16.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig16, 5, 2)
set -eu
AISIM=${AISIM:-build/aisim}
OUT=${1:-out/stellar-fig16}
SEEDS=${2:-5}
JOBS=${3:-2}
mkdir -p "$OUT"
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
awk -F'\t' '
    function t95(n) { return n == 2 ? 12.706 : n == 3 ? 4.303 : n == 4 ? 3.182 : n == 5 ? 2.776 : 1.96 }
    function ci(s, q, n,   m, v) { m = s / n; v = n > 1 ? (q - n * m * m) / (n - 1) : 0
        return v > 0 ? t95(n) * sqrt(v / n) : 0 }
    { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $5; if (!(k in n)) order[++no] = k
      n[k]++; s[k] += $6; q[k] += $6 * $6; T[$1, $2, $3, $4, $5] = $6
      if (!(($1 SUBSEP $2 SUBSEP $4 SUBSEP $5) in seen)) { seen[$1, $2, $4, $5] = 1; runs[++nr] = $1 SUBSEP $2 SUBSEP $4 SUBSEP $5 } }
    END {
      printf "| plane | placement | transport | job | runs | iteration (ms) |\n|---|---|---|---|---|---|\n"
      for (j = 1; j <= no; j++) { split(order[j], f, SUBSEP); k = order[j]
        printf "| %s | %s | %s | %s | %d | %.3f +- %.3f |\n", f[1], f[2], f[3], f[4], n[k],
               1e3 * s[k] / n[k], 1e3 * ci(s[k], q[k], n[k]) }
      printf "\n| plane | placement | multi-path vs | gains (job x seed) | mean gain | 95 %% CI | max gain |\n|---|---|---|---|---|---|---|\n"
      for (i = 1; i <= nr; i++) { split(runs[i], f, SUBSEP)
        mp = f[1] == "packet" ? "OBS-128" : "spray"
        nb = f[1] == "packet" ? 2 : 1; b[1] = f[1] == "packet" ? "single" : "ECMP"; b[2] = "CX7-like"
        for (x = 1; x <= nb; x++) {
          if (!((f[1], f[2], mp, f[3], f[4]) in T) || !((f[1], f[2], b[x], f[3], f[4]) in T)) continue
          g = (T[f[1], f[2], b[x], f[3], f[4]] - T[f[1], f[2], mp, f[3], f[4]]) / T[f[1], f[2], b[x], f[3], f[4]]
          gk = f[1] SUBSEP f[2] SUBSEP b[x]; if (!(gk in gn)) gorder[++ng] = gk
          gn[gk]++; gs[gk] += g; gq[gk] += g * g; if (!(gk in gm) || g > gm[gk]) gm[gk] = g } }
      for (j = 1; j <= ng; j++) { k = gorder[j]; split(k, f, SUBSEP)
        printf "| %s | %s | %s | %d | %.2f %% | +- %.2f %% | %.2f %% |\n", f[1], f[2], f[3], gn[k],
               100 * gs[k] / gn[k], 100 * ci(gs[k], gq[k], gn[k]), 100 * gm[k] } }' "$OUT/runs.tsv" |
    tee "$OUT/tables.md"
