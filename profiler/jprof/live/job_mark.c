/* The MPI job this process is a rank of, marked in its arena (slot 3,
 * struct arena_job in profile/arena.h) when the rank is known at MPI_Init,
 * so that a live reader finds every rank of a job on its host (`hookit
 * snapshot --job ID`, docs/live.md "Several processes").
 *
 * The id is the one the launcher gives every rank of the job alike:
 *   Slurm     SLURM_JOB_ID, with ".SLURM_STEP_ID" when there is a step
 *   Open MPI  OMPI_MCA_ess_base_jobid (mpirun's, Open MPI 4), else
 *             PMIX_NAMESPACE (PMIx launchers: Open MPI 5's prterun)
 *   Hydra     MPICH's mpiexec gives none (PMI_RANK, PMI_SIZE, PMI_FD only):
 *             the rank's parent is its host's hydra_pmi_proxy, started with
 *             "--control-port HOST:PORT", mpiexec's, the same on every
 *             host: the id is "hydra-HOST:PORT" (".PGID" added for a
 *             spawned group; the proxy's pid if it has no such option).
 * A rank with none of these has its own pid (a job of one, or a launcher
 * hookit does not know).  Nothing here is on the hot path. */
#include "profiler/jprof/jprof.h"
#include "live.h"
#include "profile/procinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The value of option name in pid's command line ("" when absent). */
JP_NOINSTR static void cmdline_option(pid_t pid, const char *name, char *out, size_t size)
{
    char buf[4096];
    ssize_t n = procinfo_read(pid, "cmdline", buf, sizeof buf);
    out[0] = 0;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
        if (!strcmp(buf + i, name) && i + (ssize_t)strlen(buf + i) + 1 < n) {
            snprintf(out, size, "%s", buf + i + strlen(buf + i) + 1);
            return;
        }
}

JP_NOINSTR static uint32_t hydra_id(char *out, size_t size)
{
    char comm[64] = "", port[128], pgid[32];
    pid_t proxy = procinfo_parent(getpid(), comm, sizeof comm);
    if (!proxy || procinfo_parent(proxy, comm, sizeof comm) == 0 || strcmp(comm, "hydra_pmi_proxy"))
        return 0;
    /* Every host's proxy connects to mpiexec's control port: the same
     * host:port for the whole job (and its process group for a spawn). */
    cmdline_option(proxy, "--control-port", port, sizeof port);
    cmdline_option(proxy, "--pgid", pgid, sizeof pgid);
    char id[192];
    if (!port[0])
        snprintf(id, sizeof id, "%d", (int)proxy);
    else
        snprintf(id, sizeof id, "%s%s%s", port, pgid[0] && strcmp(pgid, "0") ? "." : "",
                 pgid[0] && strcmp(pgid, "0") ? pgid : "");
    /* a long host name: its end kept (the port and group tell jobs apart) */
    size_t len = strlen(id), room = size > 7 ? size - 7 : 0;
    const char *tail = len > room ? id + len - room : id;
    if (size < 7)
        return 0;
    memcpy(out, "hydra-", 6);
    memcpy(out + 6, tail, strlen(tail) + 1);
    return ARENA_JOB_HYDRA;
}

JP_NOINSTR static uint32_t job_id(char *out, size_t size)
{
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *ompi = getenv("OMPI_MCA_ess_base_jobid"), *pmix = getenv("PMIX_NAMESPACE");
    if (slurm && *slurm) {
        snprintf(out, size, "%s%s%s", slurm, step && *step ? "." : "", step && *step ? step : "");
        return ARENA_JOB_SLURM;
    }
    if ((ompi && *ompi) || (pmix && *pmix)) {
        snprintf(out, size, "%s", ompi && *ompi ? ompi : pmix);
        return ARENA_JOB_OPENMPI;
    }
    uint32_t how = getenv("PMI_FD") || getenv("PMI_PORT") ? hydra_id(out, size) : 0;
    if (how)
        return how;
    snprintf(out, size, "pid-%d", (int)getpid());
    return ARENA_JOB_OTHER;
}

JP_NOINSTR void jp_job_mark(int rank, int size)
{
    if (!jp_arena_base || rank < 0)
        return;
    struct arena_job *j = &((struct arena_more *)jp_at(ARENA_MORE_REF))->job;
    char id[ARENA_JOB_ID_MAX];
    uint32_t how = job_id(id, sizeof id);
    uint32_t seq = __atomic_load_n(&j->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&j->seq, seq | 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    j->rank = rank;
    j->size = size;
    j->launcher = how;
    memcpy(j->id, id, sizeof j->id);
    __atomic_store_n(&j->seq, (seq | 1) + 1, __ATOMIC_RELEASE);
}
