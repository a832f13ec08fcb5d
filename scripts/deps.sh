#!/bin/sh
# Installs the Debian packages aisim needs, only when one is missing.
# Called by `make demo`, `make test`, `make bench` and `make fuzz`; safe to run
# by hand.  Each package and what it is for is listed in README.md.
#
#   scripts/deps.sh            build + test dependencies
#   scripts/deps.sh fuzz       also the libFuzzer toolchain (clang)
#   scripts/deps.sh mpi        also Open MPI, for `mpirun -n N aisim sweep`
#                              (rebuild aisim after: make clean all)
#   scripts/deps.sh valgrind   also valgrind (make test VALGRIND=1)
#   scripts/deps.sh tshark     also tshark (the capture test decodes aisim's
#                              pcaps with Wireshark's dissectors)
#   scripts/deps.sh ns3        also ns-3 3.37 and what building against it
#                              needs (scripts/ns3-compare.sh)
#   scripts/deps.sh hpcc       also what building the HPCC ns-3 fork and
#                              timing it needs (scripts/hpcc-compare.sh)
set -eu

PKGS="gcc make pkg-config libyaml-dev libjansson-dev libcmocka-dev \
libpcap-dev libopenblas-dev libglpk-dev coinor-libipopt-dev zlib1g-dev \
gnuplot-nox libfftw3-dev libnetfilter-queue-dev libmnl-dev iproute2 iptables"
case "${1:-}" in
fuzz) PKGS="$PKGS clang libclang-rt-14-dev" ;;
mpi) PKGS="$PKGS libopenmpi-dev openmpi-bin" ;;
valgrind) PKGS="$PKGS valgrind" ;;
tshark) PKGS="$PKGS tshark" ;;
ns3)
    # libns3-dev's pkg-config files name libgsl.so; python3 (compare.py) is
    # taken from Debian only when none is on the PATH.
    PKGS="$PKGS ns3 libns3-dev libgsl-dev g++"
    command -v python3 >/dev/null 2>&1 || PKGS="$PKGS python3"
    ;;
hpcc)
    # g++ and patch build the fork (tools/hpcc/build.py); time is
    # /usr/bin/time (CPU time and peak memory of each run).
    PKGS="$PKGS g++ patch time"
    command -v python3 >/dev/null 2>&1 || PKGS="$PKGS python3"
    ;;
esac

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >&2
