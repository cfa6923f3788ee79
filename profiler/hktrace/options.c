/* HKTRACEOPTS: libhktrace's options, comma separated.  `help` lists them; an
 * unknown option or a bad value gets one line and the default stays. */
#include "hktrace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/optlist.h"

struct ht_options ht_opt = {
    .threshold_ns = 0,
    .max_depth = 0,
    .size_bytes = 256ull << 20,
    .use_tsc = 1,
    .lines = 1,
};

/* "250", "250ns", "10us", "1.5ms", "2s" as nanoseconds. */
HT_NOINSTR static int parse_duration(const char *v, uint64_t *out)
{
    static const struct { const char *suffix; double scale; } units[] = {
        { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
    };
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || !(x >= 0))
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].suffix)) {
            double ns = x * units[i].scale;
            if (ns > 1e18)
                return -1;
            *out = (uint64_t)(ns + 0.5);
            return 0;
        }
    return -1;
}

HT_NOINSTR static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (end == v || *end || errno || x > max || *v == '-')
        return -1;
    *out = x;
    return 0;
}

HT_NOINSTR static int set_threshold(const char *v) { return parse_duration(v, &ht_opt.threshold_ns); }

HT_NOINSTR static int set_depth(const char *v)
{
    uint64_t d;
    if (parse_uint(v, 1000000, &d) || d == 0)
        return -1;
    ht_opt.max_depth = (uint32_t)d;
    return 0;
}

HT_NOINSTR static int set_size(const char *v)
{
    uint64_t mb;
    if (parse_uint(v, 1u << 20, &mb) || mb == 0)
        return -1;
    ht_opt.size_bytes = mb << 20;
    return 0;
}

HT_NOINSTR static int set_clock(const char *v)
{
    if (!strcmp(v, "tsc"))
        ht_opt.use_tsc = 1;
    else if (!strcmp(v, "monotonic"))
        ht_opt.use_tsc = 0;
    else
        return -1;
    return 0;
}

HT_NOINSTR static int set_nolines(const char *v) { (void)v; ht_opt.lines = 0; return 0; }

static const struct optlist_entry options[] = {
    { "threshold=", "threshold=T  do not write calls shorter than T (250ns, 10us, 1ms; default 0)",
      set_threshold },
    { "depth=", "depth=N      do not write calls nested deeper than N levels (default: no limit)",
      set_depth },
    { "size=", "size=MB      stop recording when the records reach MB megabytes (default 256)",
      set_size },
    { "clock=", "clock=tsc|monotonic  time source (default tsc when invariant)", set_clock },
    { "nolines", "nolines      do not read debug line info at exit", set_nolines },
};

static const struct optlist spec = { "hktrace", "HKTRACEOPTS", options, sizeof options / sizeof options[0] };

HT_NOINSTR int ht_options_parse(const char *text, void (*log)(const char *, ...))
{
    return optlist_parse(&spec, text, log);
}

HT_NOINSTR void ht_options_help_and_end(void (*log)(const char *, ...))
{
    optlist_help_and_end(&spec, log);
}
