/* JPROFOPTS: libjprof's options, comma separated.  `help` lists them; an
 * unknown option or bad value gets one line and the default stays. */
#include "jprof.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/metrics/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/optlist.h"

JP_NOINSTR static int set_clock(const char *v)
{
    if (!strcmp(v, "tsc"))
        jp_opt.use_tsc = 1;
    else if (!strcmp(v, "monotonic"))
        jp_opt.use_tsc = 0;
    else
        return -1;
    return 0;
}

JP_NOINSTR static int set_timer(const char *v)
{
    if (!strcmp(v, "exact"))
        jp_opt.sample = 0;
    else if (!strcmp(v, "sample"))
        jp_opt.sample = 1;
    else
        return -1;
    return 0;
}

JP_NOINSTR static int set_sample_us(const char *v)
{
    char *end;
    unsigned long us = strtoul(v, &end, 10);
    if (!*v || *end || us < 10 || us > 10000000)
        return -1;
    jp_opt.sample_us = (uint32_t)us;
    return 0;
}

JP_NOINSTR static int set_sampler(const char *v)
{
    if (!strcmp(v, "perf"))
        jp_opt.sampler_timer = 0;
    else if (!strcmp(v, "timer"))
        jp_opt.sampler_timer = 1;
    else
        return -1;
    return 0;
}

JP_NOINSTR static int set_threads_kept(const char *v)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || n > 1000000)
        return -1;
    jp_opt.threads_kept = (uint32_t)n;
    return 0;
}

/* exclude= and include= may be given more than once: the lists add up
 * (a JPROFOPTS item holds 255 bytes at most). */
JP_NOINSTR static int append_patterns(char **list, const char *v)
{
    size_t old = *list ? strlen(*list) : 0, len = strlen(v);
    if (!len)
        return -1;
    char *grown = realloc(*list, old + len + 2);
    if (!grown)
        return -1;
    if (old)
        grown[old++] = '@';
    memcpy(grown + old, v, len + 1);
    *list = grown;
    return 0;
}

JP_NOINSTR static int set_exclude(const char *v)
{
    return append_patterns(&jp_opt.exclude, v);
}
JP_NOINSTR static int set_include(const char *v)
{
    return append_patterns(&jp_opt.include, v);
}

JP_NOINSTR static int set_u32(const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || n < lo || n > hi)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

#define THROTTLE_CALLS_DEFAULT 65536
JP_NOINSTR static int set_throttle(const char *v)
{
    (void)v;
    jp_opt.throttle_calls = THROTTLE_CALLS_DEFAULT;
    return 0;
}
JP_NOINSTR static int set_throttle_calls(const char *v)
{
    return set_u32(v, 0, 1u << 30, &jp_opt.throttle_calls);
}
JP_NOINSTR static int set_throttle_ns(const char *v)
{
    return set_u32(v, 1, 1000000000, &jp_opt.throttle_ns);
}
JP_NOINSTR static int set_maxdepth(const char *v)
{
    return set_u32(v, 1, 1u << 30, &jp_opt.maxdepth);
}
JP_NOINSTR static int set_nopatch(const char *v)
{
    (void)v;
    jp_opt.patch = 0;
    return 0;
}

JP_NOINSTR static int set_compensate(const char *v) { (void)v; jp_opt.compensate = 1; return 0; }

JP_NOINSTR static int set_lines(const char *v) { (void)v; jp_opt.lines = 1; return 0; }
JP_NOINSTR static int set_nolines(const char *v) { (void)v; jp_opt.lines = 0; return 0; }
JP_NOINSTR static int set_nostart(const char *v) { (void)v; jp_opt.start_on = 0; return 0; }
JP_NOINSTR static int set_nocontrol(const char *v)
{
    (void)v;
    jp_opt.control_thread = JP_CONTROL_NEVER;
    return 0;
}
JP_NOINSTR static int set_control(const char *v)
{
    (void)v;
    jp_opt.control_thread = JP_CONTROL_ALWAYS;
    return 0;
}

static const struct optlist_entry options[] = {
    { "clock=", "clock=tsc|monotonic  time source (default tsc when invariant)", set_clock },
    { "timer=",
      "timer=sample|exact   exact counts with time from per-thread CPU-time samples, "
      "hookit's own code left out (default), or every call timed with the clock",
      set_timer },
    { "sample_us=", "sample_us=N          sampling period in CPU microseconds (default 250)", set_sample_us },
    { "sampler=",
      "sampler=perf|timer   what samples: a perf task-clock event per thread (default, where "
      "allowed) or a POSIX CPU-time timer (the kernel's tick)",
      set_sampler },
    { "threads_kept=",
      "threads_kept=N       ended threads shown apart; older ones are merged into one "
      "\"(merged)\" thread (default 1000)",
      set_threads_kept },
    { "compensate", "compensate           subtract the profiler's measured cost per call from times",
      set_compensate },
    { "exclude=",
      "exclude=PAT@PAT...   skip functions matching: NAME glob as hookit report shows it, "
      "module:GLOB, file:GLOB (docs/filters.md)",
      set_exclude },
    { "include=", "include=PAT@PAT...   record only functions matching (same patterns)", set_include },
    { "maxdepth=", "maxdepth=N           record frames N deep at most; deeper ones fold into their caller",
      set_maxdepth },
    { "throttle",
      "throttle             stop counting a context after 65536 calls shorter than "
      "throttle_ns each (its count is then marked incomplete)",
      set_throttle },
    { "throttle_calls=", "throttle_calls=N     throttling's checkpoint, in calls (0: off; rounded up to 2^k)",
      set_throttle_calls },
    { "throttle_ns=", "throttle_ns=N        a throttled context's calls take under N ns each (default 1000)",
      set_throttle_ns },
    { "nopatch", "nopatch              skipped functions' hook calls stay in the code (they return early)",
      set_nopatch },
    { "lines",
      "lines                resolve source file:line of functions (reads DWARF at exit: memory and time)",
      set_lines },
    { "nolines", "nolines              do not read debug line info at exit (default)", set_nolines },
    { "nostart", "nostart              start with collection off (hookit_start() turns it on)", set_nostart },
    { "control",
      "control              a control thread from the start, so that `hookit ctl` reaches a "
      "single-threaded program whose thread blocks (by default it starts with the program's "
      "first thread: one of ours would turn off glibc's single-threaded malloc and stdio; docs/live.md)",
      set_control },
    { "nocontrol",
      "nocontrol            no control thread: `hookit ctl` is then carried out only by "
      "the program's threads at their hooks (docs/live.md)",
      set_nocontrol },
    { "io", "io                   I/O per calling context, per file, per interval (default)", jp_opt_io },
    { "noio", "noio                 no I/O metrics: the I/O wrappers only pass calls through", jp_opt_noio },
    { "alloc", "alloc                malloc family per calling context, live heap, leaks at exit",
      jp_opt_alloc },
    { "wait", "wait                 time in blocking calls per calling context: wait_ns (default)",
      jp_opt_wait },
    { "nowait", "nowait               no wait time: the blocking-call wrappers only pass calls through",
      jp_opt_nowait },
    { "cpu",
      "cpu                  also sample each thread's CPU time (sample_us) into cpu_ns, "
      "keeping exact times",
      jp_opt_cpu },
    { "io_interval=",
      "io_interval=T        time slice of the I/O and heap series: 500ms, 2s, ... "
      "(default 1s)",
      jp_opt_io_interval },
};

static const struct optlist spec = { "jprof", "JPROFOPTS", options, sizeof options / sizeof options[0] };

JP_NOINSTR int jp_options_parse(const char *text, void (*log)(const char *, ...))
{
    return optlist_parse(&spec, text, log);
}

JP_NOINSTR void jp_options_help_and_end(void (*log)(const char *, ...))
{
    optlist_help_and_end(&spec, log);
}
