/* Frames that are not machine code: synthetic names (synthetic.c), MPI
 * calls (mpi.c) and Java methods (jvmti.c, which the JVM calls, not
 * libjprof). */
#ifndef JPROF_FRAMES_H
#define JPROF_FRAMES_H

#include "profiler/jprof/jprof.h"

/* ---- frames that are not machine code (synthetic.c) ----------------------
 * jp_synthetic_key("MPI:MPI_Send", "libmpi.so.40") gives a key (same name,
 * same key) to pass as fn to the entry/exit points; names.c names it. */
uint64_t jp_synthetic_key(const char *name, const char *module);
int jp_is_synthetic(uint64_t key);
int jp_synthetic_name(uint64_t key, const char **name, const char **module);

/* ---- MPI calls as frames (mpi.c, docs/mpi.md) ------------------------------ */
void jp_mpi_event(const struct hookit_event *ev);
struct profile;
struct prof_thread;
/* build.c: the mpi_bytes column, once an MPI call was seen. */
int jp_mpi_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes, uint32_t n);

#endif
