#!/bin/sh
# nccl-realhw.sh - aisim's all_reduce_perf beside published nccl-tests
# results on real servers (docs/workloads.md, "Against real hardware").
# Runs ai/nccl-8gpu-nvlink (fluid, flow level; deterministic: the seed
# changes nothing) as
#   h100   one 8 x H100 server, NVLink 450 GB/s per direction, Hopper tables;
#          reference: Azure ND H100 v5, NCCL 2.18.5, in-place busbw
#          (github.com/Azure/AI-benchmarking-guide, "Azure Results/
#          ND_H100_v5_results.md", commit f350e7e6; NCCL picks NVLS there)
#   a100   one 8 x A100 server, NVLink 300 GB/s per direction, Ampere tables;
#          reference: Azure ND A100 v4, NCCL 2.18.5, in-place busbw
#          (same repository, Azure_Results/ND_A100_v4_results.md, commit 3bb66cac)
#   a3m    two 8 x H100 servers, 8 NICs of 200 Gb/s each; reference: a public
#          all_reduce_perf log of two Google Cloud A3 Mega VMs (GPUDirect-TCPXO),
#          in-place busbw (github.com/lessizzmore/create-a3mega-ztan-fork,
#          ztan-NCCL-test-result, commit 02dd8f45)
# and prints, per case, size, the reference busbw, aisim's busbw, its error
# (aisim / reference - 1) and the algorithm and protocol aisim's tuner ran,
# and draws busbw against size for all six in OUT_DIR/busbw.png (gnuplot).
#   scripts/nccl-realhw.sh [OUT_DIR]       (default out/nccl-realhw)
set -eu
AISIM=${AISIM:-build/aisim}
OUT=${1:-out/nccl-realhw}
mkdir -p "$OUT"
S=collective.sweep
T=collective.topology
$AISIM run ai/nccl-8gpu-nvlink -q --force -o "$OUT/h100" >/dev/null
$AISIM run ai/nccl-8gpu-nvlink -q --force -o "$OUT/a100" --set $T.nvlink.rate=2400Gbps \
    --set $S.gpu=ampere >/dev/null
$AISIM run ai/nccl-8gpu-nvlink -q --force -o "$OUT/a3m" --set $T.servers=2 \
    --set $T.servers_per_tor=2 --set $T.nic_link.rate=200Gbps --set $S.min_bytes=1KiB >/dev/null
# reference busbw (GB/s) from 1 KiB to 8 GiB by doubling
H100="0.07 0.14 0.27 0.53 0.95 1.71 2.72 5.40 10.86 21.35 43.70 81.93 128.73 172.13 234.45 295.53 361.78 400.61 423.38 438.46 466.35 472.36 475.54 478.87"
A100="0.04 0.08 0.17 0.33 0.67 1.37 2.70 5.15 10.11 19.24 36.22 53.54 71.43 89.99 109.22 132.77 166.63 174.18 213.87 221.58 228.10 230.22 230.48 231.58"
A3M="0.02 0.03 0.06 0.12 0.22 0.40 0.78 1.45 3.00 5.75 9.49 15.55 22.05 27.91 33.06 59.69 99.06 153.76 213.28 262.97 298.82 318.52 330.51 337.35"
for c in h100 a100 a3m; do
    case $c in h100) ref=$H100 ;; a100) ref=$A100 ;; *) ref=$A3M ;; esac
    echo "## $c"
    echo "| size | reference busbw | aisim busbw | error | aisim ran |"
    echo "|---|---|---|---|---|"
    echo "$ref" | tr ' ' '\n' > "$OUT/$c.ref"
    awk -F, 'NR == FNR { ref[FNR] = $1; next }
             FILENAME ~ /nccl_tests/ && FNR > 1 { bus[FNR - 1] = $8; size[FNR - 1] = $1; n = FNR - 1; next }
             FILENAME ~ /collectives/ && FNR > 1 { ran[FNR] = $3 " " $13 " " $14 }
             END { for (i = 1; i <= n; i++)
                     printf "| %.0f | %.2f | %.2f | %+.0f %% | %s |\n", size[i], ref[i], bus[i],
                            100 * (bus[i] / ref[i] - 1), ran[i + 1] }' \
        "$OUT/$c.ref" "$OUT/$c/nccl_tests.csv" "$OUT/$c/collectives.csv"
done
# busbw against size, aisim beside each reference: $OUT/busbw.png (gnuplot)
for c in h100 a100 a3m; do
    awk -F, 'NR == FNR { ref[FNR] = $1; next } FNR > 1 { print $1, ref[FNR - 1], $8 }' \
        "$OUT/$c.ref" "$OUT/$c/nccl_tests.csv" > "$OUT/$c.dat"
done
if command -v gnuplot >/dev/null; then
    gnuplot <<GP
set terminal pngcairo size 900,560
set output "$OUT/busbw.png"
set logscale x 2
set format x "%.0b%B"
set xlabel "size (bytes)"
set ylabel "busbw (GB/s)"
set key top left
set grid
plot "$OUT/h100.dat" u 1:2 w lp lc 1 dt 2 t "ND H100 v5 (Azure)", \
     "$OUT/h100.dat" u 1:3 w lp lc 1 t "aisim, 8 x H100", \
     "$OUT/a100.dat" u 1:2 w lp lc 2 dt 2 t "ND A100 v4 (Azure)", \
     "$OUT/a100.dat" u 1:3 w lp lc 2 t "aisim, 8 x A100", \
     "$OUT/a3m.dat" u 1:2 w lp lc 3 dt 2 t "2 x A3 Mega (public log)", \
     "$OUT/a3m.dat" u 1:3 w lp lc 3 t "aisim, 2 x 8 H100, 8 x 200G"
GP
    echo "figure: $OUT/busbw.png"
fi
