/* JPROFOPTS: libjprof's options, comma separated.  `help` lists them; an
 * unknown option or bad value gets one line and the default stays. */
#include "jprof.h"
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jp_options jp_opt = {
    .use_tsc = 1,
    .lines = 0,
    .start_on = 1,
    .sample = 0,
    .sample_us = 1000,
    .death_timeout_ms = 10000,
    .threads_kept = 1000,
};

struct option_def {
    const char *name;           /* "clock" or "clock=" for options with a value */
    const char *help;
    int (*apply)(const char *value);
};

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

JP_NOINSTR static int set_threads_kept(const char *v)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || n > 1000000)
        return -1;
    jp_opt.threads_kept = (uint32_t)n;
    return 0;
}

JP_NOINSTR static int set_compensate(const char *v) { (void)v; jp_opt.compensate = 1; return 0; }

JP_NOINSTR static int set_lines(const char *v) { (void)v; jp_opt.lines = 1; return 0; }
JP_NOINSTR static int set_nolines(const char *v) { (void)v; jp_opt.lines = 0; return 0; }
JP_NOINSTR static int set_nostart(const char *v) { (void)v; jp_opt.start_on = 0; return 0; }

static const struct option_def options[] = {
    { "clock=", "clock=tsc|monotonic  time source (default tsc when invariant)", set_clock },
    { "timer=", "timer=exact|sample   exact time per call (default), or exact counts and time "
                "from per-thread CPU-time sampling (cheaper)", set_timer },
    { "sample_us=", "sample_us=N          sampling period in CPU microseconds (default 1000)",
      set_sample_us },
    { "threads_kept=", "threads_kept=N       ended threads shown apart; older ones are merged into one "
                       "\"(merged)\" thread (default 1000)", set_threads_kept },
    { "compensate", "compensate           subtract the profiler's measured cost per call from times",
      set_compensate },
    { "lines", "lines                resolve source file:line of functions (reads DWARF at exit: memory and time)", set_lines },
    { "nolines", "nolines              do not read debug line info at exit (default)", set_nolines },
    { "nostart", "nostart              start with collection off (hookit_start() turns it on)",
      set_nostart },
    { "io", "io                   I/O per calling context, per file, per interval (default)",
      jp_opt_io },
    { "noio", "noio                 no I/O metrics: the I/O wrappers only pass calls through",
      jp_opt_noio },
    { "alloc", "alloc                malloc family per calling context, live heap, leaks at exit",
      jp_opt_alloc },
    { "io_interval=", "io_interval=T        time slice of the I/O and heap series: 500ms, 2s, ... "
      "(default 1s)", jp_opt_io_interval },
};
#define NOPTIONS (sizeof options / sizeof options[0])

JP_NOINSTR static void list_options(void (*log)(const char *, ...))
{
    log("jprof: JPROFOPTS options (comma separated):");
    for (size_t i = 0; i < NOPTIONS; i++)
        log("jprof:   %s", options[i].help);
}

JP_NOINSTR static const char *valid_names(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NOPTIONS && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", options[i].name);
    return buf;
}

JP_NOINSTR static void apply_one(const char *item, void (*log)(const char *, ...))
{
    char names[256];
    if (!strcmp(item, "help")) {
        list_options(log);
        return;
    }
    const char *eq = strchr(item, '=');
    size_t key_len = eq ? (size_t)(eq - item) + 1 : strlen(item);
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strlen(options[i].name) != key_len || strncmp(options[i].name, item, key_len))
            continue;
        if (options[i].apply(eq ? eq + 1 : "") != 0)
            log("jprof: bad value in JPROFOPTS option '%.80s'; expected %s", item, options[i].help);
        return;
    }
    log("jprof: unknown option '%.80s' in JPROFOPTS; valid options: %s, help",
        item, valid_names(names, sizeof names));
}

JP_NOINSTR void jp_options_parse(const char *text, void (*log)(const char *, ...))
{
    char item[256];
    while (text && *text) {
        const char *end = strchr(text, ',');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        if (len >= sizeof item) {
            log("jprof: JPROFOPTS option too long (at most %zu bytes), ignored", sizeof item - 1);
        } else if (len > 0) {
            memcpy(item, text, len);
            item[len] = 0;
            apply_one(item, log);
        }
        text = end ? end + 1 : NULL;
    }
}
