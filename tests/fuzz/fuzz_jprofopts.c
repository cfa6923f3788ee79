/*
 * Fuzz target: the JPROFOPTS parser (profiler/jprof/options.c).  Any text
 * leaves the options valid and every diagnostic one bounded line.
 */
#include "profiler/jprof/jprof.h"
#include "fuzz_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    jp_options_parse(s, fuzz_log);
    if (jp_opt.use_tsc != 0 && jp_opt.use_tsc != 1)
        abort();
    if (jp_opt.lines != 0 && jp_opt.lines != 1)
        abort();
    free(s);
    return 0;
}
