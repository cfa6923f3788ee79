/*
 * Byte messages over MPI with every wait bounded, on a communicator of
 * hookit's own (a duplicate of MPI_COMM_WORLD), for any MPI library and
 * without its headers (mpi_comm.c).  Used inside a profiled rank (the
 * job's reduction at MPI_Finalize, profiler/jprof/output/mpi_job.c) and by
 * the live readers of a job on several hosts (tools/live_mpi.c), which
 * load the MPI library themselves.
 */
#ifndef HOOKIT_PROFILE_MPI_COMM_H
#define HOOKIT_PROFILE_MPI_COMM_H

#include <stddef.h>
#include <stdint.h>

/* init: hookit's communicator, a duplicate of
 * MPI_COMM_WORLD (collective: call it right after MPI_Init), and this
 * rank and size in it; 0, or -1 with why in err. */
int mpi_comm_init(int *rank, int *size, char *err, size_t errlen);
/* Send len bytes to dest, done once dest has them: 0, 1 when the deadline
 * (CLOCK_MONOTONIC ns) passed first, -1 on an MPI error. */
int mpi_comm_send(int dest, const void *buf, size_t len, uint64_t deadline_ns);
/* The same for a message dest may take long to get to (a rank's partial,
 * which its parent takes after its other children's): the sender sleeps
 * longer between polls while it waits. */
int mpi_comm_send_patient(int dest, const void *buf, size_t len, uint64_t deadline_ns);
/* Receive the message of source (a new buffer): 0, 1 when none came by the
 * deadline or its bytes took longer than transfer_ns, -1 on an error. */
int mpi_comm_recv(int source, unsigned char **buf, size_t *len, uint64_t deadline_ns, uint64_t transfer_ns);
/* The word to go on, from the parent (wait_go) and to a child (go): 0, 1
 * at the deadline, -1 on an error. */
int mpi_comm_wait_go(int parent, uint64_t deadline_ns);
int mpi_comm_go(int child, uint64_t deadline_ns);
/* CLOCK_MONOTONIC in ns. */
uint64_t mpi_comm_now(void);

/* A barrier on hookit's communicator (MPI_Ibarrier), done by the
 * deadline: 0, 1 at the deadline, -1 on an error. */
int mpi_comm_barrier(uint64_t deadline_ns);

#endif
