#!/bin/sh
# Writes the aisim(1) man page (roff) on stdout from the help texts of the
# binary given as $1: `aisim help` for the synopsis, `aisim help COMMAND`
# for each command, so the page cannot drift from the program.
#   scripts/man.sh build/aisim > build/aisim.1
set -eu
bin=$1
ver=$("$bin" version | sed -n '1s/^aisim //p')
# roff: backslashes doubled, a leading dot or quote protected.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<HEAD
.TH AISIM 1 "" "aisim $ver" "User Commands"
.SH NAME
aisim \\- deterministic simulator for cloud and edge AI infrastructure
.SH SYNOPSIS
.nf
HEAD
"$bin" help | sed -n '/^usage:/,/^$/{/^usage:/d;/^$/d;s/^  //;p;}' | esc
cat <<'MID'
.fi
.SH DESCRIPTION
aisim runs scenarios (YAML files, or built-in examples listed by
.BR "aisim list" )
of a packet-level network with TCP and RoCEv2, collectives, LLM training
and five published systems, and writes each run's results to a run
directory (summary.json and CSV tables).  The same scenario and seed give
byte-identical results.
.SH COMMANDS
MID
for c in $("$bin" help | sed -n 's/^  aisim \([a-z]*\).*/\1/p'); do
    printf '.SS %s\n.nf\n' "$c"
    "$bin" help "$c" | esc
    printf '.fi\n'
done
cat <<'TAIL'
.SH ENVIRONMENT
.TP
.B AISIM_HOME
The directory that holds aisim's examples/ and data/: built-in examples
resolve their data files against it.  Unset, aisim uses PREFIX/share/aisim
when it runs installed from PREFIX/bin (or libaisim from PREFIX/lib), else
the source tree it was built in.
.SH EXIT STATUS
0 success, 1 the run failed, 2 bad usage or a bad scenario.
.SH FILES
.TP
.I PREFIX/share/aisim
the built-in examples and their data
.TP
.I PREFIX/include/aisim/aisim.h
the embedding API (pkg-config aisim)
TAIL
