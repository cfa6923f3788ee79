/*
 * Shared command-line plumbing of the `hookit` subcommands.
 */
#include "tools/cli.h"
#include "profile/read_file.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("hookit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("hookit: ", stderr);
    if (cmd)
        fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'hookit %s --help'.\n", cmd);
    else
        fprintf(stderr, "\nTry 'hookit --help'.\n");
    return EXIT_USAGE;
}

/* Our own messages instead of getopt's (opterr = 0), so every usage error
 * has the same shape.  Needs ':' first in the optstring. */
int cli_option_error(const char *cmd, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    char opt[64];
    if (strncmp(arg, "--", 2) == 0)     /* a long option, maybe --name=value */
        snprintf(opt, sizeof opt, "%.*s", (int)strcspn(arg, "="), arg);
    else
        snprintf(opt, sizeof opt, "-%c", optopt ? optopt : '?');
    if (c == ':')
        return cli_usage_error(cmd, "option '%s' needs an argument", opt);
    return cli_usage_error(cmd, "unknown option '%s'", opt);
}

void cli_reset_getopt(void)
{
    optind = 0;                 /* glibc: full re-initialisation */
    opterr = 0;
}

int cli_load_profiles(char **paths, size_t n, struct loaded_profile **out)
{
    struct loaded_profile *ps = calloc(n ? n : 1, sizeof *ps);
    if (!ps) {
        cli_fail("out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char err[1024];
        ps[i].path = paths[i];
        ps[i].prof = profile_or_trace_read_file(paths[i], err, sizeof err);
        if (!ps[i].prof) {
            cli_fail("%s", err);
            cli_free_profiles(ps, i);
            return -1;
        }
    }
    *out = ps;
    return 0;
}

void cli_free_profiles(struct loaded_profile *profiles, size_t n)
{
    if (!profiles)
        return;
    for (size_t i = 0; i < n; i++)
        profile_free(profiles[i].prof);
    free(profiles);
}

static int finish_stream(FILE *f, const char *what)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        cli_fail("error writing %s: %s", what, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int cli_write_output(const char *path, int (*write)(FILE *out, void *ctx), void *ctx)
{
    if (!path || strcmp(path, "-") == 0) {
        errno = 0;
        if (write(stdout, ctx) < 0)
            return EXIT_FAIL;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_fail("error writing standard output: %s", strerror(errno ? errno : EIO));
            return EXIT_FAIL;
        }
        return EXIT_OK;
    }
    /* A temporary file beside path, renamed over it when complete: readers
     * never see a half-written file. */
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp)
        return cli_fail("out of memory");
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    snprintf(tmp, len + 16, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return cli_fail("cannot create %s: %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the mode a plain create would. */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    }
    errno = 0;
    int rc = write(f, ctx);
    if (finish_stream(f, path) < 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0) {
        cli_fail("cannot create %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc == 0 ? EXIT_OK : EXIT_FAIL;
}
