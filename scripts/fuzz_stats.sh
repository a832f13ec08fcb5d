#!/bin/sh
# fuzz_stats.sh LOG NAME - the executions of a libFuzzer fork-mode run
# (make fuzz, make fuzz-run) from its log: the last status line's count,
# time and rate, and the inputs skipped for running out of memory or time.
log=$1
name=$2
awk -v name="$name" '
/^#[0-9]+: / {
    n = substr($1, 2); sub(":", "", n)
    for (i = 2; i <= NF; i++) {
        if ($i == "exec/s:") rate = $(i + 1)
        if ($i == "oom/timeout/crash:") skipped = $(i + 1)
        if ($i == "time:") t = $(i + 1)
    }
}
END {
    if (n == "") { printf "fuzz_%s: no status line in the log\n", name; exit }
    split(skipped, s, "/")
    sub("s", "", t)
    printf "fuzz_%s: %d executions in %d s (%.0f exec/s); skipped %d out of memory, %d out of time; %d crashes\n", \
           name, n, t, (t > 0 ? n / t : rate), s[1], s[2], s[3]
}' "$log"
