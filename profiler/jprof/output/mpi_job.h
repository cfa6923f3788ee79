/* One profile per MPI job (mpi_job.c, mpi_comm.c; docs/mpi.md "One profile
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

/* The transport (mpi_comm.c).  init: hookit's communicator, a duplicate of
 * MPI_COMM_WORLD (collective: call it right after MPI_Init), and this
 * rank and size in it; 0, or -1 with why in err. */
int jp_mpi_comm_init(int *rank, int *size, char *err, size_t errlen);
/* Send len bytes to dest, done once dest has them: 0, 1 when the deadline
 * (CLOCK_MONOTONIC ns) passed first, -1 on an MPI error. */
int jp_mpi_comm_send(int dest, const void *buf, size_t len, uint64_t deadline_ns);
/* Receive the message of source (a new buffer): 0, 1 when none came by the
 * deadline or its bytes took longer than transfer_ns, -1 on an error. */
int jp_mpi_comm_recv(int source, unsigned char **buf, size_t *len, uint64_t deadline_ns,
                     uint64_t transfer_ns);
/* The word to go on, from the parent (wait_go) and to a child (go): 0, 1
 * at the deadline, -1 on an error. */
int jp_mpi_comm_wait_go(int parent, uint64_t deadline_ns);
int jp_mpi_comm_go(int child, uint64_t deadline_ns);
/* CLOCK_MONOTONIC in ns. */
uint64_t jp_mpi_comm_now(void);

#endif
