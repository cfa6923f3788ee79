/* Sampled times in reports (timer=sample, the default): how much data an
 * estimate rests on, and the mark that says a time is thin.
 *
 * A sampled node's on-CPU time is its sample count times the period, so
 * its relative error is about 1/sqrt(samples).  A time resting on fewer
 * than ESTIMATE_FEW samples is printed with a leading '~': a reader can
 * rank by it but should not read its digits as measured.  Profiles with
 * every call timed (timer=exact), and merged ones without a samples column,
 * have no marks. */
#ifndef HOOKIT_TOOLS_ESTIMATE_H
#define HOOKIT_TOOLS_ESTIMATE_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"
#include "tools/units.h"

#define ESTIMATE_FEW 10

struct estimate {
    const uint64_t *samples; /* the node's own samples, or NULL: not sampled */
    uint64_t *subtree;       /* samples of the node and everything below it */
    uint64_t period_ns;      /* what one sample stands for */
};

/* th's estimates (p: its profile, for the period); 0, or -1 when out of
 * memory.  estimate_free after. */
int estimate_of(const struct profile *p, const struct prof_thread *th, struct estimate *e);
void estimate_free(struct estimate *e);

/* ns as units_ns writes it, with '~' in front when the time (inclusive:
 * the node's subtree; else its own) is mostly sampled CPU time resting on
 * fewer than ESTIMATE_FEW samples (the measured blocking calls in it are
 * not estimates).  Returns buf. */
const char *estimate_ns(const struct estimate *e, uint32_t node, int inclusive, uint64_t ns,
                        char buf[UNITS_BUF]);

/* One line above a sampled profile's trees: what its times rest on, and
 * hookit's own time that no node holds (nothing when every call was
 * timed). */
void estimate_line(FILE *out, const struct profile *p);

#endif
