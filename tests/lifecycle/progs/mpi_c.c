/* An MPI program in C (declarations instead of mpi.h: any MPI will do). */
#include <stdio.h>
#include <string.h>
int MPI_Init(int *, char ***);
int MPI_Init_thread(int *, char ***, int, int *);
int MPI_Finalize(void);
int MPI_Comm_rank(void *, int *);
int MPI_Comm_size(void *, int *);
int main(int argc, char **argv) {
    int provided = -1;
    if (argc > 1 && !strcmp(argv[1], "thread")) MPI_Init_thread(&argc, &argv, 3, &provided);
    else MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank((void *)0x44000000, &rank);
    MPI_Comm_size((void *)0x44000000, &size);
    MPI_Comm_rank((void *)0x44000000, &rank);
    printf("rank %d of %d provided=%d\n", rank, size, provided);
    MPI_Finalize();
    return 0;
}
