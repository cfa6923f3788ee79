/* A stand-in MPI library: enough of the C and Fortran entry points for the
 * lifecycle layer's MPI interception.  Rank and size come from FAKE_RANK
 * and FAKE_SIZE.  MPI_X calls PMPI_X through the PLT, as real MPI
 * libraries built with weak MPI_ aliases may. */
#include <stdio.h>
#include <stdlib.h>
static int inited;
static int env_int(const char *n, int d) { const char *v = getenv(n); return v ? atoi(v) : d; }
int PMPI_Init(int *argc, char ***argv) { inited = 1; return 0; }
int PMPI_Init_thread(int *argc, char ***argv, int req, int *prov) { inited = 1; *prov = req; return 0; }
int PMPI_Finalize(void) { inited = 0; return 0; }
int PMPI_Comm_rank(void *comm, int *rank) { *rank = env_int("FAKE_RANK", 0); return inited ? 0 : 1; }
int PMPI_Comm_size(void *comm, int *size) { *size = env_int("FAKE_SIZE", 1); return inited ? 0 : 1; }
int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }
int MPI_Init_thread(int *argc, char ***argv, int req, int *prov) { return PMPI_Init_thread(argc, argv, req, prov); }
int MPI_Finalize(void) { return PMPI_Finalize(); }
int MPI_Comm_rank(void *comm, int *rank) { return PMPI_Comm_rank(comm, rank); }
int MPI_Comm_size(void *comm, int *size) { return PMPI_Comm_size(comm, size); }
void mpi_init_(int *ierr) { *ierr = PMPI_Init(0, 0); }
void mpi_init_thread_(int *req, int *prov, int *ierr) { *ierr = PMPI_Init_thread(0, 0, *req, prov); }
void mpi_finalize_(int *ierr) { *ierr = PMPI_Finalize(); }
void mpi_comm_rank_(int *comm, int *rank, int *ierr) { *ierr = PMPI_Comm_rank(0, rank); }
void mpi_comm_size_(int *comm, int *size, int *ierr) { *ierr = PMPI_Comm_size(0, size); }
