/*
 * Shared by the environment fuzz targets: the input split into one value
 * per variable, and the check of what the parsers wrote on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: %s: %.300s\n", what, detail ? detail : "");
    abort();
}

/* Everything the parsers wrote to fd 2: whole, bounded, prefixed lines. */
static void check_diagnostics(int fd)
{
    static char buf[1 << 16];
    off_t len = lseek(fd, 0, SEEK_CUR);
    if (len <= 0)
        return;
    if (len >= (off_t)sizeof buf)
        fail("too much on stderr", NULL);
    if (pread(fd, buf, (size_t)len, 0) != len)
        return;
    buf[len] = 0;
    if (buf[len - 1] != '\n')
        fail("stderr does not end with a newline", buf);
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, "hookit[", 7) != 0)
            fail("a diagnostic without the hookit[PID] prefix", line);
        if (nl - line > 1100)
            fail("a diagnostic line longer than 1100 bytes", line);
        line = nl + 1;
    }
}

/* Split the input at NUL bytes into one value per variable and set them;
 * variables past the last piece are unset.  Returns the copy to free. */
static char *set_vars(const uint8_t *data, size_t size, const char *const *vars, size_t nvars,
                      const char **values)
{
    char *copy = malloc(size + 1);
    if (!copy)
        return NULL;
    memcpy(copy, data, size);
    copy[size] = 0;
    char *p = copy, *end = copy + size;
    for (size_t i = 0; i < nvars; i++) {
        values[i] = p < end ? p : NULL;
        if (p < end)
            p += strlen(p) + 1;
        if (values[i])
            setenv(vars[i], values[i], 1);
        else
            unsetenv(vars[i]);
    }
    return copy;
}

#include <sanitizer/common_interface_defs.h>

/* Run parse() with fd 2 captured, then check what it wrote.  Sanitizer
 * reports go to a copy of the real stderr, so a crash inside parse() is
 * never hidden in the capture. */
static void capture_stderr(void (*parse)(void))
{
    static int fd = -1;
    if (fd < 0) {
        __sanitizer_set_report_fd((void *)(intptr_t)dup(2));
        if ((fd = memfd_create("fuzz-env-stderr", 0)) < 0)
            abort();
    }
    if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    int saved = dup(2);
    dup2(fd, 2);
    parse();
    dup2(saved, 2);
    close(saved);
    check_diagnostics(fd);
}
