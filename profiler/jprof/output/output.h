/* The profile: built from the live trees (build.c), with the process's
 * metadata (process.c) and names (names.c), written (output.c). */
#ifndef JPROF_OUTPUT_H
#define JPROF_OUTPUT_H

#include "profiler/jprof/jprof.h"

/* How a profile written when exit() began is made (HOOKIT_EV_EXITING): as
 * the final one, under a name the final one then replaces. */
#define JP_END_EXITING (-HOOKIT_END_EXIT)
struct profile;
/* A profile of the current state; open frames count up to now.  NULL on OOM. */
struct profile *jp_build_profile(int how);
/* Write the process's profile now.  Returns 0 or -1 (message already given). */
int jp_write_profile(int how);
/* Write p (built by the caller) under the process's usual name.  0 or -1. */
int jp_write_built(const struct profile *p);

/* Death by a signal: write from a helper process, bounded in time. */
int jp_write_profile_isolated(int how);

/* The process (process.c): its start, the signal it died of, and the
 * profile's pid, exe, argv, times and metadata. */
extern pid_t jp_profiled_pid, jp_profiled_ppid;
extern int jp_rank, jp_size;
extern uint64_t jp_start_wall_ns;
void jp_process_start(void);
extern int jp_death_signal;
int jp_fill_process(struct profile *p, int how);

/* Names (names.c): the modules and symbols the profile's addresses are
 * resolved against, kept up to date across dlopen, dlclose and fork.
 * jp_names_reload: after a dlopen (the maps copy too). */
void jp_names_start(void);
void jp_names_reload(void);
void jp_names_pre_dlclose(void *handle);
void jp_names_post_dlclose(void);
void jp_names_fork_child(void);
int jp_resolve_names(struct profile *p);
/* The start of the function holding pc, 0 when no symbol covers it. */
uint64_t jp_names_function_of(uint64_t pc);

/* The profile's file name across fork, and one writer at a time (output.c). */
void jp_output_fork_prepare(void);
void jp_output_fork_child(void);
void jp_output_forked(void);

#endif
