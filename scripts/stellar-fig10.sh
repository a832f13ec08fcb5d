#!/bin/sh
# stellar-fig10.sh - Stellar's Fig. 10a/b, scaled (docs/stellar.md, "Fig. 10"):
# the bus bandwidth of an all-reduce job measured while two background
# all-reduce jobs share the dual-plane fabric, always on
# (stellar/fig10-static) or on/off (stellar/fig10-onoff), per path-choice
# algorithm and for the baselines, over SEEDS seeds (the seed changes the
# switches' ECMP hashes, the QPs' planes and the on/off periods).  Prints
# one table per figure: mean and 95 % confidence half-width (Student t,
# scripts/meanci.awk) over the seeds of the measured job's bus bandwidth
# (GB/s).
#   scripts/stellar-fig10.sh [OUT_DIR] [SEEDS] [JOBS]   (default out/stellar-fig10, 5, 2)
set -eu
. "$(dirname "$0")/figlib.sh"
fig_args stellar-fig10 "$@"
sw() { $AISIM sweep "$@" -q --force --seeds "$SEEDS" --jobs "$JOBS"; }
# Fig. 10a: every algorithm at 128 paths, and the CX7-like baseline.
sw stellar/fig10-static --out "$OUT/a-mp" \
    --vary collective.transport.multipath.algo=obs,rr,dwrr,bestrtt,mprdma,single
sw stellar/fig10-static --out "$OUT/a-cx7" --set collective.transport.multipath=null \
    --vary collective.transport.cc=dcqcn
# Fig. 10b: OBS and RR at 4 and 128 paths, single path, the CX7-like baseline.
sw stellar/fig10-onoff --out "$OUT/b-mp" --vary collective.transport.multipath.algo=obs,rr \
    --vary collective.transport.multipath.paths=128,4
sw stellar/fig10-onoff --out "$OUT/b-mp1" --vary collective.transport.multipath.algo=single
sw stellar/fig10-onoff --out "$OUT/b-cx7" --set collective.transport.multipath=null \
    --vary collective.transport.cc=dcqcn
# One line per run from the sweeps' sweep.csv: the configuration (every
# column before `seed`, last key component) and the measured job's busbw;
# run_dir (after seed) holds commas, so the value is counted from the end.
runs() {
    for csv in "$@"; do
        awk -F, '
            NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "seed") s = i
                          if ($i == "coll_jobs.jobs.measured.busbw_GBps") b = i }
                      for (i = 1; i < s; i++) { h[i] = $i; sub(/.*\./, "", h[i]) }
                      hn = NF; next }
            { k = ""; for (i = 1; i < s; i++) k = k (i > 1 ? ", " : "") h[i] "=" $i
              if (k ~ /cc=dcqcn/) k = "CX7-like (multipath null, DCQCN)"
              printf "%s\t%s\n", k, $(NF - (hn - b)) }' "$csv"
    done
}
table() {
    printf '\n%s\n\n| configuration | busbw of the measured job (GB/s) |\n|---|---|\n' "$1"
    awk -F'\t' -f "$(dirname "$0")/meanci.awk" -v precs=2 "$2"
}
runs "$OUT/a-mp/sweep.csv" "$OUT/a-cx7/sweep.csv" > "$OUT/a.tsv"
runs "$OUT/b-mp/sweep.csv" "$OUT/b-mp1/sweep.csv" "$OUT/b-cx7/sweep.csv" > "$OUT/b.tsv"
{
    table "Fig. 10a (static background), stellar/fig10-static" "$OUT/a.tsv"
    table "Fig. 10b (on/off background), stellar/fig10-onoff" "$OUT/b.tsv"
} | tee "$OUT/tables.md"
