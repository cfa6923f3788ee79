/*
 * Fuzz target: libhookit's environment parser (hookit/config.c:
 * HOOKIT_DEBUG, HOOKIT_PROFILING, HOOKIT_OUTPUT, HOOKIT_PROFILER).
 *
 * The input is split at NUL bytes into one value per variable (a missing
 * piece unsets it); the parser reads them through getenv as at start-up.
 * Checks: flags 0 or 1, paths NUL-terminated inside their buffers and
 * either the value or the default, and everything written to stderr whole
 * "hookit[PID]: " lines of bounded length (an env value must not be able
 * to break a diagnostic into several lines).
 */
#include "hookit/internal.h"
#include "fuzz_env.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* log.c counts its own writes in the I/O wrappers' guard when they are
 * built in; a weak stand-in when the archive member is not linked. */
__attribute__((weak)) __thread int hk_io_guard;

/* HOOKIT_OUTPUT is created when missing, so a fuzzed value makes
 * directories.  They are kept inside a private scratch directory: the
 * target runs there, and while the parser runs, mkdir refuses any path
 * that could leave it (absolute, or with a ".." component), which the
 * parser reports and answers with its fallback like any unusable
 * directory.  Outside the parser (libFuzzer's own artifact directories)
 * mkdir is the system call, untouched. */
static int in_parser;
static char sandbox[] = "/tmp/hookit-fuzz-env-XXXXXX";

static int leaves_sandbox(const char *path)
{
    if (path[0] == '/')
        return 1;
    for (const char *p = path; (p = strstr(p, "..")); p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == 0))
            return 1;
    return 0;
}

int mkdir(const char *path, mode_t mode)
{
    if (in_parser && leaves_sandbox(path)) {
        errno = EACCES;
        return -1;
    }
    return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path), 0;
}

static void remove_sandbox(void)
{
    if (chdir("/") == 0)
        nftw(sandbox, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (!mkdtemp(sandbox) || chdir(sandbox) != 0)
        fail("cannot make the scratch directory", sandbox);
    atexit(remove_sandbox);
    return 0;
}

static void read_config(void)
{
    in_parser = 1;
    hk_config_read();
    in_parser = 0;
}

static const char *const vars[] = {
    "HOOKIT_DEBUG", "HOOKIT_PROFILING", "HOOKIT_OUTPUT", "HOOKIT_PROFILER",
};
#define NVARS (sizeof vars / sizeof vars[0])

static void check_path(const char *var, const char *value, const char *got, size_t size,
                       const char *dflt)
{
    if (!memchr(got, 0, size))
        fail("not NUL-terminated", var);
    int usable = value && *value && strlen(value) < size;
    if (strcmp(got, usable ? value : dflt) != 0)
        fail("path is neither the value nor the default", var);
}

/* HOOKIT_OUTPUT is made absolute at start: the value, or the current
 * directory joined with it (or alone, for the default "."). */
static void check_output(const char *value)
{
    static char cwd[4096];
    const char *got = hk_config.output_dir;
    if (!memchr(got, 0, sizeof hk_config.output_dir))
        fail("HOOKIT_OUTPUT not NUL-terminated", NULL);
    if (!cwd[0] && !getcwd(cwd, sizeof cwd))
        return;
    int usable = value && *value && strlen(value) < sizeof hk_config.output_dir;
    const char *v = usable ? value : ".";
    size_t n = strlen(cwd);
    if (!strcmp(got, v))
        return;
    if (!strcmp(v, ".") && !strcmp(got, cwd))
        return;
    if (!strncmp(got, cwd, n) && got[n] == '/' && !strcmp(got + n + 1, v))
        return;
    if (hk_config.output_fallback && !strcmp(got, hk_config.fallback_dir))
        return;
    fail("HOOKIT_OUTPUT is neither the value, nor the default, made absolute", got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *values[NVARS];
    char *copy = set_vars(data, size, vars, NVARS, values);
    if (!copy)
        return 0;
    capture_stderr(read_config);
    if (hk_config.debug != 0 && hk_config.debug != 1)
        fail("hk_config.debug", NULL);
    if (hk_config.start_on != 0 && hk_config.start_on != 1)
        fail("hk_config.start_on", NULL);
    check_output(values[2]);
    check_path("HOOKIT_PROFILER", values[3], hk_config.profiler, sizeof hk_config.profiler,
               "libjprof.so");
    if (!memchr(hk_config.plugin_dir, 0, sizeof hk_config.plugin_dir))
        fail("plugin_dir not NUL-terminated", NULL);
    free(copy);
    return 0;
}
