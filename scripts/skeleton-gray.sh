#!/bin/sh
# skeleton-gray.sh - SkeletonHunter's gray-failure sweep
# (docs/skeletonhunter.md, "Gray failures"): skeleton/small (256 RNICs,
# 30 min of churn, random failures at 60 an hour) with one family of
# failure types at a time and its magnitude varied: the nine latency types
# at +5, +10, +20, +100 us; crc_error at 0.1 % - 2 % loss; slow_drift to
# +20 and +100 us over 30 min (and +20 us in a 90-min run, where the
# long-term Z-test has a second block); a flapping link down 2, 5 and 10 s
# of every 30 s; an intermittent RNIC stalling in 20 % of its 2-, 5- and
# 10-s episodes.  SkeletonHunter only, RUNS seeds per row (the run's
# `runs`, seeds 1..RUNS); per row it prints the relevant failures, recall,
# localization accuracy, detection and localization delay (mean and 95 %
# half-width, Student t, over the runs) and how the correct verdicts were
# reached (ground_truth.csv's localized_by, summed over the runs).
#   scripts/skeleton-gray.sh [OUT_DIR] [RUNS]   (default out/skeleton-gray, 5)
set -eu
OUT=${1:-out/skeleton-gray}
RUNS=${2:-5}
AISIM=${AISIM:-build/aisim}
mkdir -p "$OUT"
T1="crc_error switch_port_down switch_port_flapping switch_offline rnic_hw_failure
    rnic_fw_unresponsive rnic_port_down rnic_port_flapping offload_failure bond_error
    gid_change pcie_nic_error gdr_error not_using_rdma repetitive_offload
    suboptimal_offload container_crash hugepage_config cc_disabled"
LAT="rnic_fw_unresponsive offload_failure pcie_nic_error gdr_error not_using_rdma
     repetitive_offload suboptimal_offload hugepage_config cc_disabled"
# weights: every Table 1 type 0, then those named 1
weights() {
    w=""
    for t in $T1; do
        case " $(echo $*) " in *" $t "*) w="$w$t: 1, " ;; *) w="$w$t: 0, " ;; esac
    done
    for t in slow_drift link_flapping rnic_intermittent; do
        case " $* " in *" $t "*) w="$w$t: 1, " ;; esac
    done
    echo "{${w%, }}"
}
# row NAME WEIGHTS SETS...: one run of RUNS seeds
row() {
    name=$1 w=$2
    shift 2
    d="$OUT/$name"
    "$AISIM" run skeleton/small -q --force --out "$d" --set skeleton.runs="$RUNS" \
        --set 'skeleton.methods=[skeleton]' --set "skeleton.failures.weights=$w" "$@" \
        >/dev/null
    awk -F, -v name="$name" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 == "skeleton" {
            printf "| %s | %.1f +- %.1f | %.1f +- %.1f %% | %.1f +- %.1f %% | %.1f +- %.1f | %.1f +- %.1f |",
                name, $col["relevant_failures"], $col["relevant_failures_ci95"],
                100 * $col["recall"], 100 * $col["recall_ci95"],
                100 * $col["localization_accuracy"], 100 * $col["localization_accuracy_ci95"],
                $col["detect_delay_s"], $col["detect_delay_s_ci95"],
                $col["localize_delay_s"], $col["localize_delay_s_ci95"]
        }' "$d/methods.csv"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["localization_correct"] == 1 { n[$col["localized_by"]]++ }
        $col["detected"] == 1 && $col["localization_correct"] != 1 {
            w[$col["localized_class"] == "" ? "none" : $col["localized_class"]]++ }
        END { s = ""; for (k in n) s = s k " " n[k] " "
              v = ""; for (k in w) v = v k " " w[k] " "
              printf " %s | %s |\n", s == "" ? "-" : s, v == "" ? "-" : v }' "$d/ground_truth.csv"
}
echo "| magnitude | relevant | recall | localization | detection delay (s) | localization delay (s) | correct verdicts by | wrong or no verdict (class named) |"
echo "|---|---|---|---|---|---|---|---|"
WL=$(weights $LAT)
for m in 5 10 20 100; do row "+${m}us" "$WL" --set skeleton.failures.latency=${m}us; done
WC=$(weights crc_error)
for l in 0.001 0.005 0.01 0.02; do row "loss-$l" "$WC" --set skeleton.failures.loss=$l; done
WD=$(weights slow_drift)
for m in 20 100; do row "drift-+${m}us" "$WD" --set skeleton.failures.latency=${m}us; done
row "drift-+20us-90min" "$WD" --set skeleton.failures.latency=20us --set skeleton.duration=5400s
WF=$(weights link_flapping)
for s in 2 5 10; do row "flap-${s}s-of-30s" "$WF" --set skeleton.failures.flap_down=${s}s; done
WI=$(weights rnic_intermittent)
for s in 2 5 10; do
    row "intermittent-${s}s-episodes" "$WI" --set skeleton.failures.intermittent_episode=${s}s
done
