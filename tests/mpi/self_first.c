/* The first MPI_Comm_rank is on MPI_COMM_SELF (as a library's may be):
 * each rank must still be named by its rank in MPI_COMM_WORLD. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int self, rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_SELF, &self);     /* a library asking its own rank in SELF first */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("%d %d %d\n", self, rank, size);
    MPI_Finalize();
    return 0;
}
