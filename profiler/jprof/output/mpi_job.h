/* One profile per MPI job (mpi_job.c, profile/mpi_comm.c; docs/mpi.md "One profile
 * per job"). */
#ifndef JPROF_MPI_JOB_H
#define JPROF_MPI_JOB_H

#include <stddef.h>
#include <stdint.h>

/* The events of include/hookit/profiler.h: MPI_INITIALIZED, _FINALIZING,
 * _FINALIZED; a fork child starts with no job of its own. */
void jp_mpi_job_initialized(void);
void jp_mpi_job_finalizing(void);
void jp_mpi_job_finalized(void);
void jp_mpi_job_fork_child(void);
/* output.c: whether the profile written at exit (how) is left out because
 * the job profile has this rank's (HOOKIT_MPI_OUTPUT=job or both). */
int jp_mpi_job_skip_write(int how);

/* The transport: profile/mpi_comm.h. */

#endif
