/* Wrappers of stdio: a stream is accounted on its descriptor's record
 * (fileno), with its own logical offset (the stream's, not the
 * descriptor's: stdio reads ahead).  Streams without a descriptor
 * (fmemopen, open_memstream) are not I/O and pass straight on.  Results,
 * errno, the stream's state and buffering are exactly the real call's. */
#include "hookit/io_internal.h"

#include <fcntl.h>
#include <string.h>

HK_NOINSTR static inline int stream_fd(FILE *fp)
{
    return fp ? fileno_unlocked(fp) : -1;
}

HK_NOINSTR static uint32_t mode_flags(const char *mode)
{
    return mode && mode[0] == 'a' ? IO_DESC_APPEND : 0;
}

/* The stream's offset is now where ftello says (after a seek, ftell). */
HK_NOINSTR static int64_t resync(FILE *fp, int fd)
{
    int saved = errno;
    IO_ENTER();
    off64_t now = IO_REAL(ftello64)(fp);
    struct io_desc *d = io_fd_desc(fd);
    if (d)
        d->spos = now;
    IO_LEAVE();
    errno = saved;
    return now;
}

#define STREAM_END(c, op, name, fd, result, bytes, offset, failed) \
    io_end_fd(c, op, name, fd, result, bytes, offset, HOOKIT_IOF_STDIO | ((failed) ? HOOKIT_IOF_FAILED : 0))

/* ---- opening and closing --------------------------------------------------------------- */
#define FOPEN(name)                                                            \
    HK_EXPORT HK_NOINSTR FILE *LC_WRAPPER(name)(const char *path, const char *mode) \
    {                                                                          \
        if (!io_tracking())                                                    \
            return IO_REAL(name)(path, mode);                                  \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        FILE *r = IO_REAL(name)(path, mode);                                   \
        io_end_open(&c, #name, stream_fd(r), AT_FDCWD, path, mode_flags(mode), \
                    HOOKIT_IOF_STDIO, r != NULL);                              \
        return r;                                                              \
    }
FOPEN(fopen)
FOPEN(fopen64)

HK_EXPORT HK_NOINSTR FILE *LC_WRAPPER(fdopen)(int fd, const char *mode)
{
    if (!io_tracking())
        return IO_REAL(fdopen)(fd, mode);
    struct io_call c;
    io_begin(&c);
    FILE *r = IO_REAL(fdopen)(fd, mode);
    if (r) {
        int saved = errno;
        IO_ENTER();
        struct io_desc *d = io_fd_desc(fd);
        if (d)
            d->spos = d->pos;
        IO_LEAVE();
        errno = saved;
    }
    STREAM_END(&c, HOOKIT_IO_OPEN, "fdopen", fd, r != NULL, 0, IO_NO_POS, !r);
    return r;
}

#define FREOPEN(name)                                                          \
    HK_EXPORT HK_NOINSTR FILE *LC_WRAPPER(name)(const char *path, const char *mode, FILE *fp) \
    {                                                                          \
        int old = stream_fd(fp);                                               \
        if (!io_tracking() || !path)                                           \
            return IO_REAL(name)(path, mode, fp);                              \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        FILE *r = IO_REAL(name)(path, mode, fp);                               \
        int saved = errno;                                                     \
        IO_ENTER();                                                            \
        io_fd_closed(old);                                                     \
        IO_LEAVE();                                                            \
        errno = saved;                                                         \
        io_end_open(&c, #name, stream_fd(r), AT_FDCWD, path, mode_flags(mode), \
                    HOOKIT_IOF_STDIO, r != NULL);                              \
        return r;                                                              \
    }
FREOPEN(freopen)
FREOPEN(freopen64)

HK_EXPORT HK_NOINSTR int LC_WRAPPER(fclose)(FILE *fp)
{
    int fd = stream_fd(fp);
    if (fd < 0 || !io_tracking())
        return IO_REAL(fclose)(fp);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(fclose)(fp);
    STREAM_END(&c, HOOKIT_IO_CLOSE, "fclose", fd, r, 0, IO_NO_POS, r == EOF);
    IO_ENTER();
    io_fd_closed(fd);
    IO_LEAVE();
    return r;
}

/* ---- transfers ------------------------------------------------------------------------------ */
/* A stream call: PREP runs before (may set locals), RESULT_BYTES/FAILED
 * after, with r the real call's result. */
#define STREAM_CALL(ret, name, op, params, args, fp, BYTES, FAILED)            \
    HK_EXPORT HK_NOINSTR ret LC_WRAPPER(name) params                           \
    {                                                                          \
        int fd = stream_fd(fp);                                                \
        if (fd < 0 || !io_tracking())                                          \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        ret r = IO_REAL(name) args;                                            \
        STREAM_END(&c, op, #name, fd, (int64_t)(BYTES_RESULT_##ret), (int64_t)(BYTES), IO_AT_SPOS, FAILED); \
        return r;                                                              \
    }
#define BYTES_RESULT_size_t r
#define BYTES_RESULT_int r
#define BYTES_RESULT_ssize_t r
#define BYTES_RESULT_charp (r != NULL)
typedef char *charp;

STREAM_CALL(size_t, fread, HOOKIT_IO_READ, (void *buf, size_t size, size_t n, FILE *fp),
            (buf, size, n, fp), fp, r * size, r == 0 && size && n && ferror_unlocked(fp))
STREAM_CALL(size_t, fwrite, HOOKIT_IO_WRITE, (const void *buf, size_t size, size_t n, FILE *fp),
            (buf, size, n, fp), fp, r * size, r < n && size)
STREAM_CALL(size_t, __fread_chk, HOOKIT_IO_READ,
            (void *buf, size_t buflen, size_t size, size_t n, FILE *fp),
            (buf, buflen, size, n, fp), fp, r * size, r == 0 && size && n && ferror_unlocked(fp))
STREAM_CALL(charp, fgets, HOOKIT_IO_READ, (char *s, int n, FILE *fp), (s, n, fp), fp,
            r ? strlen(r) : 0, !r && ferror_unlocked(fp))
STREAM_CALL(charp, __fgets_chk, HOOKIT_IO_READ, (char *s, size_t size, int n, FILE *fp),
            (s, size, n, fp), fp, r ? strlen(r) : 0, !r && ferror_unlocked(fp))
STREAM_CALL(int, fputs, HOOKIT_IO_WRITE, (const char *s, FILE *fp), (s, fp), fp,
            r != EOF ? strlen(s) : 0, r == EOF)
STREAM_CALL(int, fgetc, HOOKIT_IO_READ, (FILE *fp), (fp), fp, r != EOF, r == EOF && ferror_unlocked(fp))
STREAM_CALL(int, getc, HOOKIT_IO_READ, (FILE *fp), (fp), fp, r != EOF, r == EOF && ferror_unlocked(fp))
STREAM_CALL(int, fputc, HOOKIT_IO_WRITE, (int ch, FILE *fp), (ch, fp), fp, r != EOF, r == EOF)
STREAM_CALL(int, putc, HOOKIT_IO_WRITE, (int ch, FILE *fp), (ch, fp), fp, r != EOF, r == EOF)
STREAM_CALL(ssize_t, getline, HOOKIT_IO_READ, (char **line, size_t *n, FILE *fp), (line, n, fp), fp,
            r > 0 ? r : 0, r < 0 && ferror_unlocked(fp))
STREAM_CALL(ssize_t, getdelim, HOOKIT_IO_READ, (char **line, size_t *n, int delim, FILE *fp),
            (line, n, delim, fp), fp, r > 0 ? r : 0, r < 0 && ferror_unlocked(fp))
STREAM_CALL(int, vfprintf, HOOKIT_IO_WRITE, (FILE *fp, const char *fmt, va_list ap), (fp, fmt, ap), fp,
            r > 0 ? r : 0, r < 0)
STREAM_CALL(int, __vfprintf_chk, HOOKIT_IO_WRITE, (FILE *fp, int flag, const char *fmt, va_list ap),
            (fp, flag, fmt, ap), fp, r > 0 ? r : 0, r < 0)

/* Variadic printing: the real v-function does the work. */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(fprintf)(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int fd = stream_fd(fp);
    int r;
    if (fd < 0 || !io_tracking()) {
        r = IO_REAL(vfprintf)(fp, fmt, ap);
    } else {
        struct io_call c;
        io_begin(&c);
        r = IO_REAL(vfprintf)(fp, fmt, ap);
        STREAM_END(&c, HOOKIT_IO_WRITE, "fprintf", fd, r, r > 0 ? r : 0, IO_AT_SPOS, r < 0);
    }
    va_end(ap);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__fprintf_chk)(FILE *fp, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int fd = stream_fd(fp);
    int r;
    if (fd < 0 || !io_tracking()) {
        r = IO_REAL(__vfprintf_chk)(fp, flag, fmt, ap);
    } else {
        struct io_call c;
        io_begin(&c);
        r = IO_REAL(__vfprintf_chk)(fp, flag, fmt, ap);
        STREAM_END(&c, HOOKIT_IO_WRITE, "fprintf", fd, r, r > 0 ? r : 0, IO_AT_SPOS, r < 0);
    }
    va_end(ap);
    return r;
}

/* ---- the standard output: printf and friends write to stdout --------------------------- */
#define STDOUT_PRINT(name, REAL_CALL)                                          \
    int fd = stream_fd(stdout);                                                \
    int r;                                                                     \
    if (fd < 0 || !io_tracking()) {                                            \
        r = REAL_CALL;                                                         \
    } else {                                                                   \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        r = REAL_CALL;                                                         \
        STREAM_END(&c, HOOKIT_IO_WRITE, name, fd, r, r > 0 ? r : 0, IO_AT_SPOS, r < 0); \
    }

HK_EXPORT HK_NOINSTR int LC_WRAPPER(printf)(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    STDOUT_PRINT("printf", IO_REAL(vfprintf)(stdout, fmt, ap))
    va_end(ap);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(vprintf)(const char *fmt, va_list ap)
{
    STDOUT_PRINT("vprintf", IO_REAL(vprintf)(fmt, ap))
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__printf_chk)(int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    STDOUT_PRINT("printf", IO_REAL(__vfprintf_chk)(stdout, flag, fmt, ap))
    va_end(ap);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__vprintf_chk)(int flag, const char *fmt, va_list ap)
{
    STDOUT_PRINT("vprintf", IO_REAL(__vprintf_chk)(flag, fmt, ap))
    return r;
}

/* puts writes the string and a newline; putchar one byte. */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(puts)(const char *s)
{
    int fd = stream_fd(stdout);
    if (fd < 0 || !io_tracking())
        return IO_REAL(puts)(s);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(puts)(s);
    STREAM_END(&c, HOOKIT_IO_WRITE, "puts", fd, r, r >= 0 ? (int64_t)strlen(s) + 1 : 0, IO_AT_SPOS,
               r == EOF);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(putchar)(int ch)
{
    int fd = stream_fd(stdout);
    if (fd < 0 || !io_tracking())
        return IO_REAL(putchar)(ch);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(putchar)(ch);
    STREAM_END(&c, HOOKIT_IO_WRITE, "putchar", fd, r, r != EOF, IO_AT_SPOS, r == EOF);
    return r;
}

/* ---- scanning: the bytes consumed are the stream offset's move ------------------------------- */
HK_NOINSTR static int scan(const char *name, hk_vfscanf_fn *real, FILE *fp, const char *fmt, va_list ap)
{
    int fd = stream_fd(fp);
    if (fd < 0 || !io_tracking())
        return real(fp, fmt, ap);
    IO_ENTER();
    off64_t before = IO_REAL(ftello64)(fp);
    IO_LEAVE();
    struct io_call c;
    io_begin(&c);
    int r = real(fp, fmt, ap);
    int saved = errno;
    IO_ENTER();
    off64_t after = before >= 0 ? IO_REAL(ftello64)(fp) : -1;
    IO_LEAVE();
    errno = saved;
    int64_t bytes = after >= before && before >= 0 ? after - before : 0;
    STREAM_END(&c, HOOKIT_IO_READ, name, fd, r, bytes, IO_AT_SPOS, r == EOF && ferror_unlocked(fp));
    return r;
}

#ifdef HOOKIT_STATIC
#define PLAIN(name) LC_WRAPPER(name)
#define PLAIN_SYMBOL(name)
#else
/* The headers rename fscanf/vfscanf to __isoc99_*: the plain symbols get
 * their names through asm labels. */
#define PLAIN(name) hk_plain_##name
#define PLAIN_SYMBOL(name) __asm__(#name)
#endif
HK_EXPORT int PLAIN(fscanf)(FILE *fp, const char *fmt, ...) PLAIN_SYMBOL(fscanf);
HK_EXPORT int PLAIN(vfscanf)(FILE *fp, const char *fmt, va_list ap) PLAIN_SYMBOL(vfscanf);

HK_EXPORT HK_NOINSTR int PLAIN(vfscanf)(FILE *fp, const char *fmt, va_list ap)
{
    return scan("vfscanf", (hk_vfscanf_fn *)IO_REAL(vfscanf), fp, fmt, ap);
}

HK_EXPORT HK_NOINSTR int PLAIN(fscanf)(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan("fscanf", (hk_vfscanf_fn *)IO_REAL(vfscanf), fp, fmt, ap);
    va_end(ap);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__isoc99_vfscanf)(FILE *fp, const char *fmt, va_list ap)
{
    return scan("vfscanf", IO_REAL(__isoc99_vfscanf), fp, fmt, ap);
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__isoc99_fscanf)(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan("fscanf", IO_REAL(__isoc99_vfscanf), fp, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- positions ------------------------------------------------------------------------------------ */
#define FSEEK(name, type)                                                      \
    HK_EXPORT HK_NOINSTR int LC_WRAPPER(name)(FILE *fp, type off, int whence)  \
    {                                                                          \
        int fd = stream_fd(fp);                                                \
        if (fd < 0 || !io_tracking())                                          \
            return IO_REAL(name)(fp, off, whence);                             \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        int r = IO_REAL(name)(fp, off, whence);                                \
        int64_t at = r == 0 ? resync(fp, fd) : -1;                             \
        STREAM_END(&c, HOOKIT_IO_SEEK, #name, fd, r, 0, at, r != 0);           \
        return r;                                                              \
    }
FSEEK(fseek, long)
FSEEK(fseeko, off_t)
FSEEK(fseeko64, off64_t)

#define FTELL(name, type)                                                      \
    HK_EXPORT HK_NOINSTR type LC_WRAPPER(name)(FILE *fp)                       \
    {                                                                          \
        int fd = stream_fd(fp);                                                \
        if (fd < 0 || !io_tracking())                                          \
            return IO_REAL(name)(fp);                                          \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        type r = IO_REAL(name)(fp);                                            \
        if (r >= 0) {                                                          \
            IO_ENTER();                                                        \
            struct io_desc *d = io_fd_desc(fd);                                \
            if (d)                                                             \
                d->spos = r;                                                   \
            IO_LEAVE();                                                        \
        }                                                                      \
        STREAM_END(&c, HOOKIT_IO_META, #name, fd, r, 0, IO_NO_POS, r < 0);     \
        return r;                                                              \
    }
FTELL(ftell, long)
FTELL(ftello, off_t)
FTELL(ftello64, off64_t)

HK_EXPORT HK_NOINSTR void LC_WRAPPER(rewind)(FILE *fp)
{
    int fd = stream_fd(fp);
    if (fd < 0 || !io_tracking()) {
        IO_REAL(rewind)(fp);
        return;
    }
    struct io_call c;
    io_begin(&c);
    IO_REAL(rewind)(fp);
    int saved = errno;
    IO_ENTER();
    struct io_desc *d = io_fd_desc(fd);
    if (d)
        d->spos = 0;
    IO_LEAVE();
    errno = saved;
    STREAM_END(&c, HOOKIT_IO_SEEK, "rewind", fd, 0, 0, 0, 0);
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(fflush)(FILE *fp)
{
    int fd = stream_fd(fp);
    if (fd < 0 || !io_tracking())
        return IO_REAL(fflush)(fp);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(fflush)(fp);
    STREAM_END(&c, HOOKIT_IO_SYNC, "fflush", fd, r, 0, IO_NO_POS, r == EOF);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(ungetc)(int ch, FILE *fp)
{
    int fd = stream_fd(fp);
    if (fd < 0 || !io_tracking())
        return IO_REAL(ungetc)(ch, fp);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(ungetc)(ch, fp);
    if (r != EOF) {
        IO_ENTER();
        struct io_desc *d = io_fd_desc(fd);
        if (d && d->spos > 0)
            d->spos--;
        IO_LEAVE();
    }
    STREAM_END(&c, HOOKIT_IO_META, "ungetc", fd, r, 0, IO_NO_POS, r == EOF);
    return r;
}
