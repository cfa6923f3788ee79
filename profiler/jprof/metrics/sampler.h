/* timer=sample: exact call counts from the hooks, time from sampling
 * (sampler.c), hookit's own code left out (own_code.c). */
#ifndef JPROF_SAMPLER_H
#define JPROF_SAMPLER_H

#include "profiler/jprof/jprof.h"

int jp_sampler_start(void);
/* Times come from samples (timer=sample). */
int jp_sampling(void);
/* The CPU-time timers run (timer=sample, or cpu under exact timing). */
int jp_sampler_running(void);
uint64_t jp_sample_period_ns(void);
/* What the samples come from (sampler.c), for the profile's meta. */
const char *jp_sampler_source(void);
void jp_sampler_thread_start(void);
void jp_sampler_thread_end(void);
void jp_sampler_fork_child(void);

/* ---- whose code a sample interrupted (own_code.c) --------------------------
 * jp_own_code(pc): pc lies in libhookit's or libjprof's code, or in a PLT
 * stub that jumps there: hookit's time, never a node's.  Safe in a signal
 * handler once jp_own_code_init ran. */
void jp_own_code_init(void);
int jp_own_code_segments_known(void);
uintptr_t jp_interrupted_pc(const void *uc);
int jp_own_code(uintptr_t pc);
/* Samples charged to hookit's own code so far, over every thread. */
uint64_t jp_own_samples(void);

/* ---- samples placed by their program counter (pc_samples.c) ----------------
 * jp_pc_sample, in the handler: n samples at pc charged to node.
 * jp_pc_samples_place, building the profile: the copy's samples moved from
 * a node to its child for the function pc is in, when that is another
 * function than the node's (a prologue or an epilogue outside the hooks);
 * function_of(pc) gives the start of the function holding pc, 0 unknown.
 * 0, or -1 when out of memory (nothing moved). */
void jp_pc_sample(struct jp_thread *t, uint64_t pc, arena_ref node, uint64_t n);
void jp_pc_samples_clear(struct jp_thread *t);
struct arena_copy_node;
int jp_pc_samples_place(const struct jp_thread *t, struct arena_copy_node *nodes, uint32_t n,
                        uint64_t (*function_of)(uint64_t pc));
/* Samples that found no room in their thread's table, over every thread. */
uint64_t jp_pc_unplaced(void);

#endif
