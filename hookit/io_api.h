/* What the rest of libhookit needs from the I/O and memory wrappers
 * (init.c, plugin.c, log.c): no system headers, so it clashes with no name. */
#ifndef HOOKIT_IO_API_H
#define HOOKIT_IO_API_H

#include <stdint.h>

/* Non-zero while libhookit or the plugin runs in this thread: wrapped calls
 * then pass straight through (the plugin's own write() and malloc()). */
extern __thread int hk_io_guard __attribute__((tls_model("initial-exec")));
/* Find the real functions (dynamic variant); idempotent. */
void hk_io_resolve(void);
/* The clock of I/O timestamps (common/clock.h). */
void hk_io_clock_init(void);
int hk_io_clock_is_counter(void);
uint64_t hk_io_now(void);
double hk_io_ticks_per_ns(void);
/* hookit_host.io_quiet: the guard, for plugin code outside its events. */
void hk_io_quiet(int on);
/* The plugin's capabilities are known: switch the wrappers on or off. */
void hk_io_configure(uint32_t caps);
/* The same for the blocking-call wrappers (io_wait.c): HOOKIT_CAP_WAIT in
 * caps switches them on; begin is the plugin's wait_begin or NULL. */
void hk_wait_configure(uint32_t caps, uint64_t (*begin)(void));

#endif
