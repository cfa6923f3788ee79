/* A job for the reduction at MPI_Finalize (tests/mpi/test_mpi_job.py):
 *
 *   job [threads N] [die R] [nofinalize] [after] [status S]
 *
 * Every rank calls leaf() rank + 1 times from compute(), and one MPI_Barrier
 * (MPI_Init_thread with MPI_THREAD_MULTIPLE when threads are asked, else
 * MPI_Init).  threads N: N threads of each rank call in_thread() i + 1
 * times (thread i), joined before MPI_Finalize.  die R: rank R kills itself
 * (SIGKILL) before MPI_Finalize, and the others do not wait for it.
 * nofinalize: no rank calls MPI_Finalize.  after: after_finalize() runs
 * after MPI_Finalize.  status S: exit status S.  Built with -DVARIANT_B
 * the program calls variant_b() where it calls variant_a() (MPMD).  Each
 * rank prints "rank R of P" on stdout. */
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;

void leaf(int i)
{
    sink += i;
}
void compute(int rank)
{
    for (int i = 0; i <= rank; i++)
        leaf(i);
}
void in_thread(long i)
{
    sink += i;
}
void *thread_main(void *arg)
{
    long n = (long)arg;
    for (long i = 0; i <= n; i++)
        in_thread(i);
    return NULL;
}
void variant_a(void)
{
    sink++;
}
void variant_b(void)
{
    sink--;
}
void after_finalize(void)
{
    sink++;
}

int main(int argc, char **argv)
{
    int threads = 0, die = -1, finalize = 1, after = 0, status = 0, rank, size;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "die") && i + 1 < argc)
            die = atoi(argv[++i]);
        else if (!strcmp(argv[i], "nofinalize"))
            finalize = 0;
        else if (!strcmp(argv[i], "after"))
            after = 1;
        else if (!strcmp(argv[i], "status") && i + 1 < argc)
            status = atoi(argv[++i]);
    }
    if (threads) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t t[16];
    for (long i = 0; i < threads && i < 16; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)i);
    compute(rank);
#ifdef VARIANT_B
    variant_b();
#else
    variant_a();
#endif
    for (long i = 0; i < threads && i < 16; i++)
        pthread_join(t[i], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d\n", rank, size);
    fflush(stdout);
    if (rank == die)
        raise(SIGKILL);
    if (finalize)
        MPI_Finalize();
    if (after)
        after_finalize();
    return status;
}
