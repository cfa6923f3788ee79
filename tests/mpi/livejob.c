/* An MPI job to watch live (tests/mpi/test_mpi_live.py):
 *
 *   livejob SECONDS
 *
 * Every rank runs rounds until SECONDS have passed on rank 0, or rank 0
 * finds a file "stop" in its working directory: in each,
 * work() calls unit() (rank + 1) x 100 times, then an MPI_Barrier, so the
 * last rank is the slowest and the others wait for it in the barrier.
 * Rank 0 prints "ready" once every rank has done its first round. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void unit(int i)
{
    for (int k = 0; k < 20000; k++)
        sink += (unsigned long)(i ^ k);
}

__attribute__((noinline)) void work(int rank)
{
    for (int i = 0; i < (rank + 1) * 100; i++)
        unit(i);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 3, end = now() + seconds;
    int go = 1;
    for (int round = 0; go; round++) {
        work(rank);
        MPI_Barrier(MPI_COMM_WORLD);
        if (round == 0 && rank == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        go = rank != 0 || (now() < end && access("stop", F_OK) != 0);
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
