/* Another PMPI tool (tests/mpi): counts MPI_Send calls through the
 * profiling interface and says how many at the end.  hookit stacks with it. */
#include <mpi.h>
#include <stdio.h>

static int sends;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "pmpi_tool: %d MPI_Send\n", sends);
}
