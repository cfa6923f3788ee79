/* What the hooks cost a run, estimated from its profile (docs/cost.md):
 * the number of instrumented calls times the per-call cost the profile
 * measured, against the run's own time.  For the readers (`hookit report`,
 * `hookit advise`) and for the profiler, which can say it when the run
 * ends.
 *
 * The per-call cost comes from the profile itself:
 *   timer=sample  hookit_sampled_ns (the samples that landed in hookit's
 *                 code and in the PLT stubs that reach it) over the calls;
 *                 the run's time is every CPU sample's, the program's and
 *                 hookit's;
 *   timer=exact   overhead_ns_per_call (the hook pair, calibrated at start
 *                 and end); the run's time is the threads' inclusive time,
 *                 which holds the hooks' cost.
 * A profile with neither (another plugin's), a merge of runs (the first
 * run's figures over every run's calls) and a trace have no estimate. */
#ifndef HOOKIT_PROFILE_COST_H
#define HOOKIT_PROFILE_COST_H

#include <stddef.h>
#include <stdint.h>

struct profile;

/* Share of the run from which the cost is worth a line: a third, that is a
 * run at least 1.5 times as long as it would be without the hooks (the bar
 * issue 29 sets for a run rebuilt as `hookit advise` says). */
#define COST_LARGE_SHARE (1.0 / 3.0)
/* And only for a cost that matters and is measured: at least 10 ms, and,
 * sampled, from at least 20 samples in hookit's own code (a share from
 * fewer is off by more than a fifth; a 23-call run whose one sample fell
 * in the hooks said "100%"). */
#define COST_LINE_MIN_NS 10e6
#define COST_LINE_MIN_SAMPLES 20

/* Two costs of a profiled run that are not per call, for what `hookit
 * advise` expects of a run: starting (loading libjprof and libbfd, mapping
 * the arena, the sampler) and, at the end, building and writing the
 * profile; and under timer=sample the sampler's signals.  The end is in the
 * profile (build_ns); the other two are not, so they are these figures,
 * measured on the 2-CPU VM of docs/cost.md (CPU time, user + system, medians
 * of 9-10 alternating runs):
 *   COST_START_NS   `hookit run` of an instrumented empty main() against
 *                   the same program run plainly: 4.3 ms;
 *   COST_SAMPLE_NS  a one-function busy loop of 1 s under `hookit run`
 *                   against plainly, less the start and the end, over its
 *                   3,989 samples: 5.5 us a sample (signal delivery, the
 *                   handler, the perf event), 2.2% of the CPU at the default
 *                   period of 250 us. */
#define COST_START_NS 4.3e6
#define COST_SAMPLE_NS 5.5e3

struct run_cost {
    uint64_t calls;       /* instrumented calls in the profile, every thread */
    double ns_per_call;   /* what one call's hook pair costs */
    double inner_ns;      /* timer=exact: of it, what lands in the callee's own
                         * inclusive time (overhead_inner_ns_per_call) */
    double cost_ns;       /* calls x ns_per_call */
    double run_ns;        /* the run's time the cost is part of */
    double fixed_ns;      /* COST_START_NS + the profile's build_ns: not in cost_ns */
    double period_ns;     /* the sampling period, 0 when not sampling */
    uint64_t own_samples; /* sampled: the samples in hookit's own code */
    int sampled;          /* 1: CPU time from samples; 0: every call timed */
};

/* p's estimate into c: 0, or -1 when p carries no measured per-call cost
 * or no time. */
int cost_of_run(const struct profile *p, struct run_cost *c);

/* What the sampler costs a run of cpu_ns of CPU (0 when not sampling). */
double cost_sampling_ns(const struct run_cost *c, double cpu_ns);

/* The cost's share of the run (0 to 1). */
double cost_share(const struct run_cost *c);

/* The one line that says the cost is large (no newline), for a profile
 * whose estimate is at least COST_LARGE_SHARE of its run; what names the
 * profile in the hint (a path, or "PROFILE").  1 with the line in buf, 0
 * when there is nothing to say. */
int cost_overhead_line(const struct profile *p, const char *what, char *buf, size_t size);

/* ns as "1.23s", "45.60ms", "7.80us" or "12ns" into buf (at least 16 bytes). */
const char *cost_fmt_ns(double ns, char *buf, size_t size);

#endif
