/* hookit's diagnostics: one line on stderr, "hookit[PID]: message".
 *
 * One home for every library (libhookit, the lifecycle layer, the
 * profilers, the JVMTI agent), so the rules below hold everywhere:
 *  - one write(2) per line, so lines from several threads or processes
 *    never interleave, and no stdio, so the program's own stderr buffer is
 *    untouched;
 *  - errno is kept;
 *  - the message's control bytes (a newline, an escape) become '?': a value
 *    quoted from the environment or a file stays on its line and cannot
 *    forge another "hookit[PID]:" line (log injection);
 *  - a message longer than a line's buffer (1 KiB) is cut. */
#ifndef HOOKIT_COMMON_LOG_H
#define HOOKIT_COMMON_LOG_H

#include <stdarg.h>

void hk_log_vwrite(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void hk_log_write(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
