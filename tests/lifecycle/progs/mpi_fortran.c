/* The calls a Fortran MPI program makes (gfortran mangling: name_). */
#include <stdio.h>
void mpi_init_(int *);
void mpi_comm_rank_(int *, int *, int *);
void mpi_comm_size_(int *, int *, int *);
void mpi_finalize_(int *);
int main(void) {
    int ierr, comm = 91, rank, size;
    mpi_init_(&ierr);
    mpi_comm_rank_(&comm, &rank, &ierr);
    mpi_comm_size_(&comm, &size, &ierr);
    printf("fortran rank %d of %d ierr=%d\n", rank, size, ierr);
    mpi_finalize_(&ierr);
    return 0;
}
