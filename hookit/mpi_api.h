/* What the rest of libhookit needs from the MPI wrappers (mpi_core.c). */
#ifndef HOOKIT_MPI_API_H
#define HOOKIT_MPI_API_H

/* lc_client.mpi_call: the lifecycle layer's MPI_Init, MPI_Init_thread and
 * MPI_Finalize, reported like the other MPI calls (HOOKIT_EV_MPI_ENTER
 * before the real call, done = 0; HOOKIT_EV_MPI_EXIT after it, done = 1). */
void hk_mpi_lifecycle(const char *name, int done);

#endif
