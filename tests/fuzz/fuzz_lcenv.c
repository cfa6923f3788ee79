/*
 * Fuzz target: the lifecycle layer's environment parser (lifecycle/util.c:
 * HOOKIT_DEBUG, HOOKIT_FOLLOW, HOOKIT_SHOOTDOWN_TIMEOUT).  Same input
 * convention and stderr checks as fuzz_env.c; every setting must end up in
 * its documented range.
 */
#include "lifecycle/internal.h"
#include "fuzz_env.h"

static const char *const vars[] = { "HOOKIT_DEBUG", "HOOKIT_FOLLOW", "HOOKIT_SHOOTDOWN_TIMEOUT" };
#define NVARS (sizeof vars / sizeof vars[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *values[NVARS];
    char *copy = set_vars(data, size, vars, NVARS, values);
    if (!copy)
        return 0;
    capture_stderr(lc_read_config);
    if (lc_cfg.shootdown_ms < 1 || lc_cfg.shootdown_ms > 3600000)
        fail("HOOKIT_SHOOTDOWN_TIMEOUT out of range", values[2]);
    if ((lc_cfg.debug != 0 && lc_cfg.debug != 1) || (lc_cfg.follow != 0 && lc_cfg.follow != 1))
        fail("lifecycle flags not 0 or 1", NULL);
    free(copy);
    return 0;
}
