#!/bin/sh
# stellar-fig9.sh - Stellar's Fig. 9 on RoCEv2 (docs/stellar.md section 6):
# the permutation of RDMA WRITEs of stellar/rdma-permutation for every
# path-choice algorithm at 4 and 128 paths, and the baselines (multi-QP
# ECMP, ConnectX-7-like single path with DCQCN), over SEEDS seeds; prints
# per configuration the ToR uplinks' maximum queue (average over the
# uplinks, and the largest), the FCT p99 and the goodput, each as the mean
# and the 95 % confidence half-width (Student t) over the seeds.
#   scripts/stellar-fig9.sh [OUT_DIR] [SEEDS]      (default out/stellar-fig9, 3)
set -eu
AISIM=${AISIM:-build/aisim}
OUT=${1:-out/stellar-fig9}
SEEDS=${2:-3}
mkdir -p "$OUT"
$AISIM sweep stellar/rdma-permutation -q --force --out "$OUT/mp" --seeds "$SEEDS" \
    --vary net.transport.multipath.algo=single,rr,obs,bestrtt,dwrr,mprdma \
    --vary net.transport.multipath.paths=4,128
$AISIM sweep stellar/rdma-permutation-multiqp -q --force --out "$OUT/multiqp" --seeds "$SEEDS" \
    --vary net.transport.multipath.algo=single
$AISIM sweep stellar/rdma-permutation -q --force --out "$OUT/cx7" --seeds "$SEEDS" \
    --set net.transport.multipath=null --vary net.transport.cc=dcqcn
# one line per run: configuration, avg and max ToR-uplink max queue, p99, goodput
num() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -1 | sed 's/.*: *//'; }
for d in "$OUT"/mp/*/ "$OUT"/multiqp/*/ "$OUT"/cx7/*/; do
    name=$(basename "$d" | sed 's/,seed=[0-9]*//')
    case "$d" in *multiqp*) name="multi-QP ECMP (4 QPs, single)" ;; *cx7*) name="CX7-like DCQCN" ;; esac
    awk -F, -v name="$name" -v p99="$(num fct_p99_s "$d/summary.json")" \
        -v gp="$(num goodput_bps "$d/summary.json")" '
        FNR == 1 { next }
        $1 ~ /tor/ && $1 ~ /->.*agg/ { n++; s += $7; if ($7 > m) m = $7 }
        END { printf "%s\t%.0f\t%.0f\t%s\t%s\n", name, s / n, m, p99, gp }' "$d/links.csv"
done > "$OUT/runs.tsv"
awk -F'\t' '
    function t95(n) { return n == 2 ? 12.706 : n == 3 ? 4.303 : n == 4 ? 3.182 : n == 5 ? 2.776 : 1.96 }
    { k = $1; if (!(k in n)) order[++no] = k; n[k]++
      for (i = 2; i <= 5; i++) { s[k, i] += $i; q[k, i] += $i * $i } }
    END {
      printf "| configuration | ToR uplink max queue, avg over uplinks (KB) | largest (KB) | FCT p99 (us) | goodput (Tbps) |\n|---|---|---|---|---|\n"
      for (j = 1; j <= no; j++) {
        k = order[j]; printf "| %s (n=%d)", k, n[k]
        for (i = 2; i <= 5; i++) {
          sc = i <= 3 ? 1e-3 : i == 4 ? 1e6 : 1e-12
          m = s[k, i] / n[k]; v = n[k] > 1 ? (q[k, i] - n[k] * m * m) / (n[k] - 1) : 0
          if (v < 0) v = 0
          printf " | %.1f +- %.1f", m * sc, t95(n[k]) * sqrt(v / n[k]) * sc
        }
        printf " |\n"
      }
    }' "$OUT/runs.tsv"
