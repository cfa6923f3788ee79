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
 *             the rank's parent is the host's hydra_pmi_proxy, whose parent
 *             is mpiexec on the host it was started on; the id is
 *             "hydra-PID" with mpiexec's pid there, and the proxy's pid on
 *             another host (one id per host: a reader per host, as a job on
 *             several hosts is read, finds them all).
 * A rank with none of these has its own pid (a job of one, or a launcher
 * hookit does not know).  Nothing here is on the hot path. */
#include "profiler/jprof/jprof.h"
#include "live.h"
#include "profile/procinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

JP_NOINSTR static uint32_t hydra_id(char *out, size_t size)
{
    char comm[64] = "", up[64] = "";
    pid_t proxy = procinfo_parent(getpid(), comm, sizeof comm);
    if (!proxy || procinfo_parent(proxy, comm, sizeof comm) == 0 || strcmp(comm, "hydra_pmi_proxy"))
        return 0;
    pid_t launcher = procinfo_parent(proxy, up, sizeof up);
    char name[64] = "";
    /* the proxy's parent: mpiexec on the launching host, sshd elsewhere */
    if (launcher > 1 && procinfo_parent(launcher, name, sizeof name) != 0 && !strncmp(name, "mpiexec", 7))
        snprintf(out, size, "hydra-%d", (int)launcher);
    else
        snprintf(out, size, "hydra-%d", (int)proxy);
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
