/*
 * Readable time units.  Two decimals except for whole nanoseconds; the unit
 * is chosen after rounding, so 999999ns prints as "1.00ms", not "1000.00us".
 */
#include "tools/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The fixed unit of --units, or NULL for auto. */
static const struct fixed_unit { const char *name; double scale; } *fixed_unit;

int units_set(const char *name)
{
    static const struct fixed_unit fixed[] = {
        { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    if (!strcmp(name, "auto")) {
        fixed_unit = NULL;
        return 0;
    }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!strcmp(name, fixed[i].name)) {
            fixed_unit = &fixed[i];
            return 0;
        }
    return -1;
}

const char *units_ns_f(double ns, char buf[UNITS_BUF])
{
    static const struct { const char *name; double scale; } units[] = {
        { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    if (!(ns >= 0))             /* NaN or negative: not a time */
        ns = 0;
    if (fixed_unit) {
        if (fixed_unit->scale == 1)
            snprintf(buf, UNITS_BUF, "%.0fns", round(ns));
        else
            snprintf(buf, UNITS_BUF, "%.2f%s", ns / fixed_unit->scale, fixed_unit->name);
        return buf;
    }
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
    if (ns < 1000 && !fixed_unit) {
        snprintf(buf, UNITS_BUF, "%lluns", (unsigned long long)ns);
        return buf;
    }
    return units_ns_f((double)ns, buf);
}
