/* timer=sample: exact call counts from the hooks, time from sampling
 * (sampler.c). */
#ifndef JPROF_SAMPLER_H
#define JPROF_SAMPLER_H

#include "profiler/jprof/jprof.h"

int jp_sampler_start(void);
/* Times come from samples (timer=sample). */
int jp_sampling(void);
/* The CPU-time timers run (timer=sample, or cpu under exact timing). */
int jp_sampler_running(void);
uint64_t jp_sample_period_ns(void);
void jp_sampler_thread_start(void);
void jp_sampler_thread_end(void);
void jp_sampler_fork_child(void);

#endif
