/*
 * blaspin.h - one BLAS kernel on every x86-64 machine with AVX2 and FMA, so
 * that a run's output is byte-identical across such machines.
 *
 * OpenBLAS (Debian builds it with DYNAMIC_ARCH) picks its kernels by CPU
 * when it is loaded: on a CPU it does not know it falls back to its
 * Prescott (SSE3) kernels, on others it takes SkylakeX or Haswell ones,
 * whose sums run in different orders, so the federated-learning models and
 * BIRP's QP (IPOPT over the same BLAS) differ in the last digits from one
 * machine to the next.  OPENBLAS_CORETYPE forces the choice, but OpenBLAS
 * reads it in its own initialiser, before main(), and the C library's
 * initialiser resets the environment after .preinit_array has run, so a
 * program cannot set it for itself in time: aisim_blas_pin() sets it and
 * executes the program again (once: the variable is then set).
 *
 * Kept as is: a value already in the environment (a user may want the
 * machine's own kernels), a CPU without AVX2 and FMA (the Haswell kernels
 * would not run there; its results may differ in the last digits), and a
 * run under valgrind (its virtual CPU has no AVX-512, so OpenBLAS picks
 * Haswell itself, and an exec would leave the tool).  Programs that embed
 * libaisim set the variable themselves (docs/reliability.md).
 */
#ifndef AISIM_BLASPIN_H
#define AISIM_BLASPIN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void aisim_blas_pin(char **argv)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const char *pre = getenv("LD_PRELOAD");
    if (getenv("OPENBLAS_CORETYPE") || (pre && strstr(pre, "vgpreload")))
        return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
        setenv("OPENBLAS_CORETYPE", "Haswell", 0) != 0)
        return;
    execv("/proc/self/exe", argv);
    fprintf(stderr, "aisim: note: cannot execute /proc/self/exe again to pin OpenBLAS's kernels "
                    "(%s); results may differ from other machines' in the last digits\n",
            strerror(errno));
#else
    (void)argv;
#endif
}

#endif
