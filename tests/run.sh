#!/bin/sh
# Runs each test program given as an argument, prints its cmocka report, and
# ends with one line "N passed, N failed" over every test case of every
# program.  Exits non-zero if any program failed or crashed.
#
# The environment variable AISIM names the aisim binary for the CLI tests;
# RUNNER, if set, is a command that runs each program (e.g. valgrind).
set -u
passed=0
failed=0
bad_progs=""
for t in "$@"; do
    # shellcheck disable=SC2086
    out=$(${RUNNER:-} "$t" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ]; then
        bad_progs="$bad_progs $(basename "$t")"
        [ "$f" -eq 0 ] && failed=$((failed + 1))
    fi
done
# the layers' include rule (an upward #include fails the suite)
if ! "$(dirname "$0")/layers.sh"; then
    bad_progs="$bad_progs layers.sh"
fi
echo
[ -n "$bad_progs" ] && echo "failing programs:$bad_progs"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ -z "$bad_progs" ]
