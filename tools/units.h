/* Readable units for reports. */
#ifndef HOOKIT_TOOLS_UNITS_H
#define HOOKIT_TOOLS_UNITS_H

#include <stdint.h>

#define UNITS_BUF 32

/* ns as "850ns", "1.23us", "45.60ms", "2.00s": three significant digits
 * at least, the largest unit that keeps the number below 1000 (seconds
 * have no upper bound).  Returns buf. */
const char *units_ns(uint64_t ns, char buf[UNITS_BUF]);

/* A fractional ns value (an average per call) the same way. */
const char *units_ns_f(double ns, char buf[UNITS_BUF]);

/* --units: print every time in one unit, "ns", "us", "ms" or "s", or choose
 * per number ("auto", the default).  0, or -1 for another name. */
int units_set(const char *name);

#endif
