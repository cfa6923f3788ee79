/* Known MPI calls of every kind, once each per rank (tests/mpi), with the
 * bytes hookit should report (docs/mpi.md):
 *   p2p():    MPI_Isend 100 int (400), MPI_Irecv 100 int (400), MPI_Waitall (0),
 *             MPI_Sendrecv 50 double sent (400)
 *   coll():   MPI_Bcast 16 double (128), MPI_Reduce 8 int (32), MPI_Gather 2 int
 *             contributed (8), MPI_Scatter 3 int received (12), MPI_Allgather 5 int
 *             (20), MPI_Alltoall 3 int to each of 4 ranks (48), MPI_Allreduce in
 *             place 6 int (24), MPI_Ibarrier (0), MPI_Wait (0)
 *   fileio(): MPI_File_open (0), MPI_File_write_at 64 int (256), MPI_File_read_at
 *             64 int (256), MPI_File_close (0)
 * argv[1]: the directory for the file. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

void p2p(int rank, int size)
{
    static int out[100], in[100];
    static double s[50], r[50];
    MPI_Request req[2];
    MPI_Isend(out, 100, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in, 100, MPI_INT, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(s, 50, MPI_DOUBLE, (rank + 1) % size, 2, r, 50, MPI_DOUBLE,
                 (rank + size - 1) % size, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void coll(int rank, int size)
{
    static double b[16];
    static int v[64], w[64];
    MPI_Bcast(b, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(v, w, 8, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(v, 2, MPI_INT, w, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(v, 3, MPI_INT, w, 3, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(v, 5, MPI_INT, w, 5, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(v, 3, MPI_INT, w, 3, MPI_INT, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    (void)rank;
    (void)size;
}

void fileio(int rank, const char *dir)
{
    char path[4096];
    static int data[64];
    snprintf(path, sizeof path, "%s/calls.dat", dir);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, (MPI_Offset)rank * 256, data, 64, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at(fh, (MPI_Offset)rank * 256, data, 64, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p2p(rank, size);
    coll(rank, size);
    fileio(rank, argc > 1 ? argv[1] : ".");
    MPI_Finalize();
    return 0;
}
