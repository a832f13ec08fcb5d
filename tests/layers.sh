#!/bin/sh
# The layers' include rule (docs/architecture.md): core/, net/, transport/
# and workload/ include no header of a layer above them (models/, systems/,
# cli/), and models/ none of systems/ or cli/; and no object of net/ or
# transport/ calls a function that a systems/ object defines (the objects
# under $BUILD, default build, when they are there).  Prints each offence
# and exits 1 if there is one.  Run from the repository root.
set -u
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(models|systems|cli|real)/' \
          src/core src/net src/transport src/workload 2>/dev/null
      grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(systems|cli|real)/' \
          src/models 2>/dev/null)
if [ -n "$bad" ]; then
    printf 'layers: an include points upward:\n%s\n' "$bad"
    exit 1
fi
obj=${BUILD:-build}/src
if [ -d "$obj/systems" ] && command -v nm >/dev/null; then
    up=$(find "$obj/systems" -name '*.o' -exec nm -g --defined-only {} + 2>/dev/null |
         awk 'NF == 3 {print $3}' | sort -u)
    # objects whose source is gone (a stale build directory) are not checked
    calls=$(find "$obj/net" "$obj/transport" -name '*.o' | while read -r o; do
                src=${o#"${BUILD:-build}"/}
                [ -f "${src%.o}.c" ] && printf '%s\n' "$o"
            done | xargs -r nm -A -u 2>/dev/null | awk '{print $NF, $1}' | sort)
    hit=$(printf '%s\n' "$calls" | awk 'NR == FNR {up[$1] = 1; next} ($1 in up)' \
          /dev/fd/3 - 3<<EOF2
$up
EOF2
)
    if [ -n "$hit" ]; then
        printf 'layers: a net/ or transport/ object calls into systems/:\n%s\n' "$hit"
        exit 1
    fi
fi
echo "layers: ok"
