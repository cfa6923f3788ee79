/* A 4-rank job with rank-dependent work and known MPI calls (tests/mpi):
 *   work(): rank r calls step() (r + 1) * STEPS times, each sleeping
 *           UNIT_MS / STEPS ms (sleeping, not spinning: four ranks on two
 *           cores would make the times depend on the scheduler), so over
 *           ranks min = 1 unit (rank 0), max = 4 units (rank 3), mean = 2.5
 *           units of wall time;
 *   exchange(): ROUNDS rounds of MPI_Send / MPI_Recv of 1000 doubles
 *           (8000 bytes) around the ring, then MPI_Allreduce of 10 ints
 *           (40 bytes) and one MPI_Barrier.
 * Optional argument: "die R SIG": rank R raises SIG after the exchange
 * (the others finish or are killed by the launcher). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_MS 80
#define STEPS 10
#define ROUNDS 3
#define COUNT 1000

__attribute__((no_instrument_function)) static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile double sink;

/* Sleep until end: steps end on a fixed schedule, so a late wake-up
 * does not add up over steps. */
void step(double end)
{
    for (double left; (left = end - now_ms()) > 0;) {
        struct timespec ts = { 0, (long)(left * 1e6) };
        nanosleep(&ts, NULL);
    }
    sink = sink + 1.0;
}

void work(int rank)
{
    double start = now_ms();
    for (int i = 0; i < (rank + 1) * STEPS; i++)
        step(start + (i + 1) * (double)UNIT_MS / STEPS);
}

void exchange(int rank, int size)
{
    static double out[COUNT], in[COUNT];
    for (int i = 0; i < ROUNDS; i++) {
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        if (rank % 2 == 0) {
            MPI_Send(out, COUNT, MPI_DOUBLE, to, i, MPI_COMM_WORLD);
            MPI_Recv(in, COUNT, MPI_DOUBLE, from, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, COUNT, MPI_DOUBLE, from, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, COUNT, MPI_DOUBLE, to, i, MPI_COMM_WORLD);
        }
    }
    int v[10] = { rank }, sum[10];
    MPI_Allreduce(v, sum, 10, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    work(rank);
    exchange(rank, size);
    if (argc > 3 && strcmp(argv[1], "die") == 0 && rank == atoi(argv[2])) {
        fflush(stdout);
        raise(atoi(argv[3]));
    }
    if (argc > 3 && strcmp(argv[1], "die") == 0)
        MPI_Barrier(MPI_COMM_WORLD);    /* the others wait for the dead rank: the launcher ends them */
    MPI_Finalize();
    return 0;
}
