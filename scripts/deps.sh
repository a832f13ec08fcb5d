#!/bin/sh
# Installs the Debian packages aisim needs, only when one is missing.
# Called by `make demo`, `make test`, `make bench` and `make fuzz`; safe to run
# by hand.  Each package and what it is for is listed in README.md.
#
#   scripts/deps.sh            build + test dependencies
#   scripts/deps.sh fuzz       also the libFuzzer toolchain (clang)
set -eu

PKGS="gcc make pkg-config libyaml-dev libjansson-dev libcmocka-dev \
libpcap-dev libopenblas-dev libglpk-dev coinor-libipopt-dev zlib1g-dev \
gnuplot-nox"
if [ "${1:-}" = fuzz ]; then
    PKGS="$PKGS clang libclang-rt-14-dev"
fi

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
