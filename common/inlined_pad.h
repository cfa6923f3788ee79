/* Whose is a landing pad installed in a machine frame that holds inlined
 * callees: theirs, or their host's (docs/exactness.md; jprof's tree and
 * hktrace's trace).
 *
 * Inlined copies share their host's machine frame and return address, so
 * the stack pointer that closes the frames the unwinder left
 * (common/unwind.h) keeps them open.  The landing pad's call-site ranges
 * (struct hookit_flow, UNWIND) say which code throws to it: code inside
 * its try, or inside the scope of its cleanup.  An inlined callee's entry
 * hook is called in the host's code where the callee was entered; when
 * that call lies in the landing pad's ranges, the callee was entered
 * inside the landing pad's try, so the landing pad is its caller's and the
 * callee is gone.  (Clang makes the inlined entry hook's call an invoke of
 * the enclosing landing pad; a callee that owns the landing pad was
 * entered before its own try, outside those ranges.)
 *
 * The entry hook's calls are found in the host's code once per (host,
 * callee) and kept: x86-64 only (`lea callee(%rip),%rdi` or `mov
 * $callee,%edi`, then the call to the entry hook).  The frame is closed
 * when every call found lies in the landing pad's ranges; when none does,
 * when some do and some do not, or when none is found, it stays open,
 * as it did before: its exit then comes unmatched, and is said. */
#ifndef HOOKIT_COMMON_INLINED_PAD_H
#define HOOKIT_COMMON_INLINED_PAD_H

#include <hookit/profiler.h>
#include <stdint.h>

/* Find the entry hook the program's calls reach; at the plugin's start. */
void hk_inlined_pads_start(void);

/* The open frame i from the top of a plugin's shadow stack (0: the
 * innermost): its function and its call site. */
typedef void (*hk_open_frame_fn)(const void *ctx, unsigned i, uint64_t *fn, uintptr_t *site);

/* How many of the `open` frames on top (those the unwinder's stack
 * pointer left open, common/unwind.h) the landing pad of f (UNWIND) has
 * unwound: inlined copies, above their host, entered inside its try. */
unsigned hk_inlined_unwound(const struct hookit_flow *f, unsigned open, hk_open_frame_fn frame,
                            const void *ctx);

#endif
