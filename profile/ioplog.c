/* The ioprof log's codec, shared by its writer and its reader
 * (profile/ioplog.h): operation names and the TOKEN encoding. */
#include "profile/ioplog.h"

#include <stdlib.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))

/* Indexed by enum hookit_io_op. */
static const char *const op_names[] = {
    "?", "open", "close", "read", "write", "seek", "sync", "meta", "dup", "mmap",
};
_Static_assert(sizeof op_names / sizeof *op_names == HOOKIT_IO_MMAP + 1,
               "one name per enum hookit_io_op value");

NOINSTR const char *ioplog_op_name(uint32_t op)
{
    return op < sizeof op_names / sizeof *op_names ? op_names[op] : "?";
}

uint32_t ioplog_op_of(const char *name)
{
    for (uint32_t i = 1; i < sizeof op_names / sizeof *op_names; i++)
        if (!strcmp(name, op_names[i]))
            return i;
    return HOOKIT_IO_META;
}

NOINSTR size_t ioplog_escape(char *out, size_t size, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (; s && *s && n + 4 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == '%' || c == 127) {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        } else {
            out[n++] = (char)c;
        }
    }
    if (n == 0 && n + 1 < size)
        out[n++] = '-';
    out[n] = 0;
    return n;
}

void ioplog_unescape(char *s)
{
    char *o = s;
    if (!strcmp(s, "-")) {
        *s = 0;
        return;
    }
    for (; *s; s++) {
        if (*s == '%' && s[1] && s[2]) {
            char hex[3] = { s[1], s[2], 0 };
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}
