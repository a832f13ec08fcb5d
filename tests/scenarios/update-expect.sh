#!/bin/sh
# Regenerates the "# expect:" first line of every invalid scenario under
# tests/scenarios/bad/ from what `aisim check` prints now.  Run from the
# repository root (make golden-update), then review `git diff`: every changed
# message is a behaviour change.
set -eu
AISIM=${AISIM:-build/aisim}
for f in tests/scenarios/bad/*.yaml; do
    if ! head -1 "$f" | grep -q '^# expect: '; then
        { echo '# expect: (pending)'; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
    fi
    msg=$("$AISIM" check "$f" 2>&1 >/dev/null | head -1) || true
    { printf '# expect: %s\n' "$msg"; tail -n +2 "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
done
