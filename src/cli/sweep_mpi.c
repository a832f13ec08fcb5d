/*
 * sweep_mpi.c - the MPI collectives of a sweep across ranks (sweep_mpi.h).
 *
 * Open MPI is only initialised when a launcher started aisim with several
 * ranks, so that a plain `aisim sweep` (and every other command) neither
 * pays for MPI nor needs a launcher, even when it is compiled in.
 *
 * The calls use MPI's profiling names (PMPI_*, the same functions): the
 * sequential MUMPS that Ipopt links defines stub MPI_Init, MPI_Comm_rank
 * and MPI_Finalize of its own, which would otherwise be the ones called.
 */
#include "cli/sweep_mpi.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef AISIM_MPI
#include <mpi.h>
#endif

bool sweep_mpi_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 1)
            return true;
    }
    return false;
}

#ifdef AISIM_MPI

int sweep_mpi_init(int *rank, int *size, char *msg, size_t n)
{
    (void)msg, (void)n;
    PMPI_Init(NULL, NULL);
    PMPI_Comm_rank(MPI_COMM_WORLD, rank);
    PMPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

int sweep_mpi_bcast(int v)
{
    PMPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

void sweep_mpi_gather(int rc, long point, int *rcs, long *points)
{
    PMPI_Gather(&rc, 1, MPI_INT, rcs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    PMPI_Gather(&point, 1, MPI_LONG, points, 1, MPI_LONG, 0, MPI_COMM_WORLD);
}

void sweep_mpi_finalize(void) { PMPI_Finalize(); }

#else

int sweep_mpi_init(int *rank, int *size, char *msg, size_t n)
{
    *rank = 0;
    *size = 1;
    snprintf(msg, n, "started by mpirun, but this aisim was built without MPI (Open MPI's "
                     "libopenmpi-dev was not found): run scripts/deps.sh and rebuild, or "
                     "use --jobs N on one machine");
    return -1;
}

int sweep_mpi_bcast(int v) { return v; }

void sweep_mpi_gather(int rc, long point, int *rcs, long *points)
{
    rcs[0] = rc;
    points[0] = point;
}

void sweep_mpi_finalize(void) {}

#endif
