/*
 * Readable time units.  Two decimals except for whole nanoseconds; the unit
 * is chosen after rounding, so 999999ns prints as "1.00ms", not "1000.00us".
 */
#include "tools/units.h"

#include <math.h>
#include <stdio.h>

const char *units_ns_f(double ns, char buf[UNITS_BUF])
{
    static const struct { const char *name; double scale; } units[] = {
        { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    if (!(ns >= 0))             /* NaN or negative: not a time */
        ns = 0;
    if (round(ns) < 1000) {
        snprintf(buf, UNITS_BUF, "%.0fns", round(ns));
        return buf;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        double v = round(ns / units[i].scale * 100) / 100;
        if (v < 1000 || i == sizeof units / sizeof units[0] - 1) {
            snprintf(buf, UNITS_BUF, "%.2f%s", v, units[i].name);
            return buf;
        }
    }
    return buf;
}

const char *units_ns(uint64_t ns, char buf[UNITS_BUF])
{
    if (ns < 1000) {
        snprintf(buf, UNITS_BUF, "%lluns", (unsigned long long)ns);
        return buf;
    }
    return units_ns_f((double)ns, buf);
}
