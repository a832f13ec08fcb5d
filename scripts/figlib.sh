# figlib.sh - sourced by the scripts/stellar-fig*.sh figure scripts, not run.
#
# fig_args NAME "$@": the scripts' arguments [OUT_DIR] [SEEDS] [JOBS]
# (default out/NAME, 5 seeds, 2 jobs) into OUT, SEEDS, JOBS; AISIM from the
# environment (default build/aisim); creates OUT.
fig_args() {
    fig_name=$1
    shift
    AISIM=${AISIM:-build/aisim}
    OUT=${1:-out/$fig_name}
    SEEDS=${2:-5}
    JOBS=${3:-2}
    mkdir -p "$OUT"
}

# num KEY FILE: the first number of "KEY" in a summary.json.
num() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -1 | sed 's/.*: *//'; }
