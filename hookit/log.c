/* Diagnostics: the one logger (common/log.c), with libhookit's own write
 * kept out of the I/O wrappers' counts, and the debug switch. */
#include "hookit/internal.h"
#include "hookit/io_api.h"
#include "common/log.h"

HK_NOINSTR void hk_vlog(const char *fmt, va_list ap)
{
    hk_io_guard++;
    hk_log_vwrite(fmt, ap);
    hk_io_guard--;
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
