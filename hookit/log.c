/* Diagnostics: one line on stderr, written with a single write(2) so lines
 * from several threads or processes never interleave, and without stdio so
 * the program's own stderr buffering is untouched. */
#include "hookit/internal.h"
#include "hookit/io_api.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

HK_NOINSTR void hk_vlog(const char *fmt, va_list ap)
{
    int saved = errno;
    char line[1024];
    int n = snprintf(line, sizeof line, "hookit[%d]: ", (int)getpid());
    int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    size_t len = (m < 0) ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    /* Values quoted from the environment or a file may hold newlines or
     * escapes: one line stays one line, and cannot forge another
     * "hookit[PID]:" line. */
    for (size_t i = (size_t)n; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[len++] = '\n';
    hk_io_guard++;
    ssize_t w = write(STDERR_FILENO, line, len);
    hk_io_guard--;
    (void)w;
    errno = saved;
}

HK_NOINSTR void hk_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hk_vlog(fmt, ap);
    va_end(ap);
}

HK_NOINSTR void hk_debug(const char *fmt, ...)
{
    if (!hk_config.debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    hk_vlog(fmt, ap);
    va_end(ap);
}
