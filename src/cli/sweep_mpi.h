/*
 * sweep_mpi.h - `mpirun -n N aisim sweep ...`: the ranks of an MPI job share
 * a sweep's points (sweep.c).  Compiled with Open MPI when the build found
 * it (AISIM_MPI: pkg-config ompi-c, Debian libopenmpi-dev); without it, a
 * sweep launched by mpirun stops with a message that says so.
 *
 * Only these few collectives are used, all rooted at rank 0: the sweep
 * itself (checks, the table) stays in sweep.c.
 */
#ifndef AISIM_SWEEP_MPI_H
#define AISIM_SWEEP_MPI_H

#include <stdbool.h>
#include <stddef.h>

/* True when this process was started by an MPI launcher with more than
 * one rank (Open MPI's, or a PMI launcher's, environment). */
bool sweep_mpi_launched(void);
/* Initialises MPI; *rank and *size of the job.  -1 with a message in msg
 * if aisim was built without MPI. */
int sweep_mpi_init(int *rank, int *size, char *msg, size_t n);
/* Rank 0's v, on every rank. */
int sweep_mpi_bcast(int v);
/* Every rank's (rc, failed point index or -1) gathered at rank 0 into
 * rcs[size], points[size] (ignored on other ranks). */
void sweep_mpi_gather(int rc, long point, int *rcs, long *points);
void sweep_mpi_finalize(void);

#endif
