/*
 * Shared by the option-string fuzz targets (JPROFOPTS, HKTRACEOPTS): the
 * log callback the parsers get.  It formats each message as the real host
 * does and checks it is one bounded line: no option text may make a
 * diagnostic unbounded, or reach it as a format string.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 1024

static void fuzz_log(const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= MAX_LINE) {
        fprintf(stderr, "fuzz: a diagnostic of %d bytes: %.200s...\n", n, line);
        abort();
    }
}

/* The input as a C string (parsers take getenv()'s NUL-terminated text). */
static char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}
