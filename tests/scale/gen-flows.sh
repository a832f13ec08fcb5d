#!/bin/sh
# gen-flows.sh N > FILE: a `net` scenario with N explicit flows (the
# `flows:` list) on a 32-host leaf-spine, one flow per line, about 36 bytes
# each: N = 1500000 gives the 54 MB scenario of issue 19 item 11.  For
# measuring `aisim check` at scale (docs/benchmarks.md); not committed as
# data.
set -eu
n=${1:?usage: gen-flows.sh N}
cat <<'YAML'
name: many-flows
model: net
stop: 1ms
net:
  topology:
    kind: leaf_spine
    leaves: 4
    spines: 2
    hosts_per_leaf: 8
    host_link: {rate: 10Gbps, delay: 1us, buffer: 512KiB}
    fabric_link: {rate: 40Gbps, delay: 1us, buffer: 1MiB}
  flows:
YAML
awk -v n="$n" 'BEGIN {
    for (i = 0; i < n; i++) {
        s = i % 32; d = (i * 7 + 1) % 32; if (d == s) d = (d + 1) % 32
        printf "    - {src: h%d, dst: h%d, size: %dKB}\n", s, d, 1 + i % 97
    }
}'
