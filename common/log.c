/* hookit's diagnostics (common/log.h). */
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR void hk_log_vwrite(const char *fmt, va_list ap)
{
    int saved = errno;
    char line[1024];
    int n = snprintf(line, sizeof line, "hookit[%d]: ", (int)getpid());
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = m < 0 ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    for (size_t i = (size_t)n; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
    errno = saved;
}

NOINSTR void hk_log_write(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hk_log_vwrite(fmt, ap);
    va_end(ap);
}
