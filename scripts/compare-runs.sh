#!/bin/sh
# compare-runs.sh OLD_AISIM NEW_AISIM [OUTDIR]
#
# Runs every built-in example scenario (`aisim list`) with both binaries
# (default settings, -q) and checks that the two run directories are
# byte-identical and the exit codes agree.  Wall-clock measurements are left
# out: run.log, and in summary.json every key named "wall" or containing
# "solver_time" (compared with jq after deleting those).  For engine changes: events must run in exactly the same
# order, so every output must stay the same.  Exit 0 if all match.
set -u
old=$1 new=$2
out=${3:-$(mktemp -d -t aisim-compare-XXXXXX)}
mkdir -p "$out/old" "$out/new"
fail=0
nowall() {
    jq -S 'walk(if type == "object" then with_entries(select(.key != "wall" and
        (.key | test("solver_time") | not))) else . end)' "$1"
}
for name in $("$old" list | awk '/^built-in examples/ {on = 1; next} on && NF {print $1}'); do
    d=$(echo "$name" | tr / _)
    for b in old new; do
        if [ $b = old ]; then bin=$old; else bin=$new; fi
        t0=$(date +%s%N)
        "$bin" run "$name" -q --out "$out/$b/$d" >"$out/$b/$d.stdout" 2>&1
        rc=$?
        t1=$(date +%s%N)
        echo $rc >"$out/$b/$d.rc"
        echo $(( (t1 - t0) / 1000000 )) >"$out/$b/$d.ms"
    done
    files=$(find "$out/new/$d" -type f ! -name run.log 2>/dev/null | wc -l)
    if cmp -s "$out/old/$d.rc" "$out/new/$d.rc" &&
        diff -r -x run.log -x summary.json "$out/old/$d" "$out/new/$d" >/dev/null 2>&1 &&
        { [ ! -e "$out/old/$d/summary.json" ] ||
          [ "$(nowall "$out/old/$d/summary.json")" = "$(nowall "$out/new/$d/summary.json")" ]; }; then
        printf '%-34s identical  rc %s, %s files, old %s ms, new %s ms\n' "$name" \
            "$(cat "$out/new/$d.rc")" "$files" "$(cat "$out/old/$d.ms")" "$(cat "$out/new/$d.ms")"
    else
        printf '%-34s DIFFERENT\n' "$name"
        diff -rq -x run.log "$out/old/$d" "$out/new/$d" | head -5
        fail=1
    fi
done
echo "outputs in $out"
exit $fail
