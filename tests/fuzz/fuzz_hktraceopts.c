/*
 * Fuzz target: the HKTRACEOPTS parser (profiler/hktrace/options.c).  Any
 * text leaves the options within their documented bounds and every
 * diagnostic one bounded line.
 */
#include "profiler/hktrace/hktrace.h"
#include "fuzz_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    ht_options_parse(s, fuzz_log);
    if (ht_opt.size_bytes == 0 || ht_opt.size_bytes > (1ull << 40))
        abort();
    if (ht_opt.max_depth > 1000000)
        abort();
    free(s);
    return 0;
}
