/* Preloaded into an MPI job (tests/mpi/test_mpi_job_faults.py): a
 * PMPI_Issend that always fails with an MPI error code, so that every
 * rank's send of its partial profile to its parent rank fails as on a
 * broken network.  hookit finds PMPI_Issend by name in the process
 * (profile/mpi_comm.c) and gets this one; the program's own MPI calls
 * (MPI_Barrier, its library's internals) never go through it. */
int PMPI_Issend(const void *buf, int count, void *type, int dest, int tag, void *comm, void *request)
{
    (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm, (void)request;
    return 16; /* MPI_ERR_OTHER in Open MPI's numbering: any non-zero is an error */
}
