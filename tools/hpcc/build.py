#!/usr/bin/env python3
"""Build the HPCC ns-3 fork's `third` program without waf.

The fork (alibaba-edu/High-Precision-Congestion-Control, an ns-3.17
derivative) builds with waf under Python 2, which Debian 12 does not have.
This script does what its waf build does for the modules `scratch/third.cc`
needs, and nothing else (no Python bindings, tests or examples):

  1. reads each module's `wscript` for its source and public header lists,
  2. copies the public headers into BUILD/ns3/ and writes the umbrella
     headers ns3/<module>-module.h and the configuration headers
     (ns3/core-config.h, ns3/config-store-config.h) that waf's configure
     would write on Debian 12 x86-64,
  3. writes BUILD/Makefile (one object per source, one static archive per
     module, the program linked from them) and runs make.

  tools/hpcc/build.py SIMULATION_DIR BUILD_DIR [-jN]

SIMULATION_DIR is the fork's `simulation/` directory.  Compiler flags are
waf's optimized profile (-O3) with the C++ dialect the old code needs;
patches in tools/hpcc/*.patch are applied to a copy of the sources (see
tools/hpcc/README.md for each hunk).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

# Modules in link order (a module before the modules it uses).
MODULES = ["applications", "point-to-point", "internet", "config-store", "tools",
           "stats", "mpi", "bridge", "network", "core"]

# Sources and headers waf adds under conditions that hold on Debian 12
# x86-64 (core/wscript: not win32, __uint128_t present, threads, real time).
EXTRA = {
    "core": (["model/unix-system-wall-clock-ms.cc", "model/int64x64-128.cc",
              "model/realtime-simulator-impl.cc", "model/wall-clock-synchronizer.cc",
              "model/system-thread.cc", "model/unix-fd-reader.cc",
              "model/unix-system-mutex.cc", "model/unix-system-condition.cc"],
             ["model/int64x64-128.h", "model/realtime-simulator-impl.h",
              "model/wall-clock-synchronizer.h", "model/unix-fd-reader.h",
              "model/system-mutex.h", "model/system-thread.h",
              "model/system-condition.h"]),
}

CORE_CONFIG = """\
#ifndef NS3_CORE_CONFIG_H
#define NS3_CORE_CONFIG_H
/* What ns-3.17's src/core/wscript configure defines on Debian 12 x86-64. */
#define HAVE___UINT128_T 1
#define INT64X64_USE_128 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_DIRENT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_GETENV 1
#define HAVE_SIGNAL_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_RT 1
#endif
"""

# config-store without GTK+ and libxml2 (neither is used by third.cc).
CONFIG_STORE_CONFIG = """\
#ifndef NS3_CONFIG_STORE_CONFIG_H
#define NS3_CONFIG_STORE_CONFIG_H
#endif
"""

# ccache when installed (a rebuild into a new directory then takes seconds).
CXX = os.environ.get("CXX") or ("ccache g++" if shutil.which("ccache") else "g++")
# The fork's `optimized` waf profile (its wscript: -O3, -march=native when
# the compiler takes it, and -g, left out here: it changes no code; no
# NS3_ASSERT_ENABLE / NS3_LOG_ENABLE, which only the debug profile, its
# default, defines); -std=gnu++11 as its waf-tools/cflags.py passes; -w
# silences the old code's warnings.
CXXFLAGS = "-O3 -march=native -std=gnu++11 -w"


def lists(wscript):
    """(sources, headers) of a module's wscript build(): the first list
    assigned to the module object's .source and to headers.source."""
    text = re.sub(r"#.*", "", open(wscript).read())
    build = text[text.index("def build(bld)"):]
    var = re.search(r"(\w+)\s*=\s*bld\.create_ns3_module\(", build).group(1)

    def first_list(name):
        m = re.search(r"\b%s\.source\s*=\s*\[(.*?)\]" % name, build, re.S)
        return re.findall(r"'([^']+)'", m.group(1)) if m else []
    return first_list(var), first_list("headers")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sim, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    jobs = sys.argv[3] if len(sys.argv) > 3 else "-j2"
    here = os.path.dirname(os.path.abspath(__file__))

    # A private copy of the sources, patched (the fork's tree is not touched).
    src = os.path.join(build, "src")
    patches = sorted(f for f in os.listdir(here) if f.endswith(".patch"))
    stamp = "".join("%s %s\n" % (hashlib.sha1(open(os.path.join(here, p), "rb").read())
                                  .hexdigest(), p) for p in patches)
    stamp_file = os.path.join(build, "patches.txt")
    if os.path.isdir(src) and (not os.path.exists(stamp_file) or open(stamp_file).read() != stamp):
        shutil.rmtree(src)      # patches changed: copy and patch again
    if not os.path.isdir(src):
        os.makedirs(build, exist_ok=True)
        tmp = src + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        for m in MODULES:
            shutil.copytree(os.path.join(sim, "src", m), os.path.join(tmp, "src", m))
        shutil.copytree(os.path.join(sim, "scratch"), os.path.join(tmp, "scratch"))
        for p in patches:
            subprocess.check_call(["patch", "-s", "-p1", "-d", tmp, "-i",
                                   os.path.join(here, p)])
        os.rename(tmp, src)
        with open(stamp_file, "w") as f:
            f.write(stamp)

    inc = os.path.join(build, "ns3")
    os.makedirs(inc, exist_ok=True)
    rules, objs_by_mod = [], {}
    for m in MODULES:
        srcs, hdrs = lists(os.path.join(src, "src", m, "wscript"))
        es, eh = EXTRA.get(m, ([], []))
        srcs, hdrs = srcs + es, hdrs + eh
        for h in hdrs:
            dst = os.path.join(inc, os.path.basename(h))
            shutil.copyfile(os.path.join(src, "src", m, h), dst)
        with open(os.path.join(inc, m + "-module.h"), "w") as f:
            f.write("#ifndef NS3_MODULE_%s\n#define NS3_MODULE_%s\n" %
                    ((m.upper().replace("-", "_"),) * 2))
            for h in hdrs:
                f.write('#include "%s"\n' % os.path.basename(h))
            f.write("#endif\n")
        objs = []
        for s in srcs:
            if not s.endswith((".cc", ".c")):
                continue
            o = "obj/%s/%s.o" % (m, os.path.splitext(s)[0])
            objs.append(o)
            rules.append("%s: %s | headers\n\t@mkdir -p $(@D)\n\t$(CXX) $(CXXFLAGS) "
                         "-DNS3_MODULE_COMPILATION -c -o $@ $<\n" %
                         (o, os.path.join(src, "src", m, s)))
        objs_by_mod[m] = objs
    with open(os.path.join(inc, "core-config.h"), "w") as f:
        f.write(CORE_CONFIG)
    with open(os.path.join(inc, "config-store-config.h"), "w") as f:
        f.write(CONFIG_STORE_CONFIG)

    libs = " ".join("lib/libns3-%s.a" % m for m in MODULES)
    mk = ["CXX = %s" % CXX,
          "CXXFLAGS = %s -I%s -MMD -MP" % (CXXFLAGS, build),
          ".PHONY: all headers", "all: third", "headers:", ""]
    for m in MODULES:
        mk.append("lib/libns3-%s.a: %s\n\t@mkdir -p $(@D)\n\trm -f $@ && ar rcs $@ $^\n"
                  % (m, " ".join(objs_by_mod[m])))
    mk.append("obj/third.o: %s | headers\n\t@mkdir -p $(@D)\n\t$(CXX) $(CXXFLAGS) -c -o $@ $<\n"
              % os.path.join(src, "scratch", "third.cc"))
    mk.append("third: obj/third.o %s\n\t$(CXX) -o $@ obj/third.o -Wl,--whole-archive %s "
              "-Wl,--no-whole-archive -lpthread -lrt\n" % (libs, libs))
    mk += rules
    mk.append("-include $(shell find obj -name '*.d' 2>/dev/null)\n")
    with open(os.path.join(build, "Makefile"), "w") as f:
        f.write("\n".join(mk))
    subprocess.check_call(["make", "-C", build, jobs, "--no-print-directory"])


if __name__ == "__main__":
    main()
