/*
 * hookit link: link a program with hookit built in, for programs that
 * cannot preload libhookit.so (fully static ones above all).  The lifecycle
 * layer's entry points become ld --wrap wrappers (__wrap_exit calls
 * __real_exit...) and libhookit.a is added to the link.
 */
#include "tools/cli.h"
#include "lifecycle/wrapped.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const link_usage =
    "usage: hookit link [-p PROFILER] [-u SYM]... -- CC ARGS...\n"
    "\n"
    "Run the link command CC ARGS... with hookit linked in statically: the\n"
    "process and thread entry points (main, exit, fork, exec*, pthread_create,\n"
    "sigaction, signal, dlopen, MPI_Init, ...) are wrapped with ld --wrap and\n"
    "libhookit.a is added, so the program reports to hookit's lifecycle layer and\n"
    "profiler without LD_PRELOAD.  Works for fully static programs (-static);\n"
    "there dlopen/dlclose are not wrapped.  A command that does not link (-c,\n"
    "-S, -E) runs unchanged.  hookit execs CC: the exit status is CC's.\n"
    "\n"
    "Options:\n"
    "  -p, --profiler NAME   the profiler linked in: lib/hookit/libNAME.a (default\n"
    "                        jprof; 'none' links the lifecycle layer and hooks only)\n"
    "  -u, --undefined SYM   also pass -Wl,--undefined=SYM (force a symbol, for\n"
    "                        example a client callback in an archive, into the link)\n"
    "  -v, --verbose         print the link command before running it\n"
    "  -h, --help            this help\n"
    "\n"
    "Fully static programs need the static libbfd and its own dependencies\n"
    "(Debian: binutils-dev, libiberty-dev, zlib1g-dev, libzstd-dev).\n"
    "\n"
    "Example:\n"
    "  hookit link -- gcc -static -finstrument-functions -o app app.c\n";

/* What libhookit.a wraps, by how it is linked: the one list,
 * lifecycle/wrapped.h (names only). */
#define WRAP_NAME(name) #name,
static const char *const wrapped_main[] = { LC_WRAPPED_MAIN(WRAP_NAME) NULL };
static const char *const wrapped_forced[] = {
    LC_WRAPPED_PROCESS(WRAP_NAME) HK_IO_WRAPPED(WRAP_NAME) HK_ALLOC_WRAPPED(WRAP_NAME) NULL
};
static const char *const wrapped_dynamic_only[] = { LC_WRAPPED_DYNAMIC(WRAP_NAME) NULL };
static const char *const wrapped_where_called[] = { LC_WRAPPED_MPI(WRAP_NAME) HK_FLOW_WRAPPED(WRAP_NAME) NULL };
#undef WRAP_NAME
/* Libraries libhookit.a needs after it. */
static const char *const link_libs[] = { "-ldl", "-lpthread", NULL };
/* What a profiler archive (its A2N uses libbfd) needs after it. */
static const char *const profiler_libs_dynamic[] = { "-lbfd", "-lz", "-lm", NULL };
static const char *const profiler_libs_static[] = { "-lbfd", "-lsframe", "-liberty", "-lz", "-lzstd",
                                                    "-lm", NULL };

/* libsframe exists from binutils 2.40 on: only name it when it is there. */
static int have_static_lib(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "${CC:-gcc} -print-file-name=%s", name);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char out[PATH_MAX] = "";
    char *line = fgets(out, sizeof out, p);
    pclose(p);
    return line && out[0] == '/';
}

/* <dir of /proc/self/exe>/../lib/NAME, canonical, or NULL with a message. */
static char *find_lib(const char *name)
{
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) {
        cli_fail("link: cannot find the hookit binary (/proc/self/exe): %s", strerror(errno));
        return NULL;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(path, sizeof path, "%s/../lib/%s", self, name);
    char *lib = realpath(path, NULL);
    if (!lib)
        cli_fail("link: cannot find %s at %s: %s", name, path, strerror(errno));
    return lib;
}

static int has_arg(int argc, char **argv, const char *const *names)
{
    for (int i = 0; i < argc; i++)
        for (const char *const *n = names; *n; n++)
            if (!strcmp(argv[i], *n))
                return 1;
    return 0;
}

struct argbuf {
    char **v;
    int n, cap;
};

static int push(struct argbuf *a, const char *fmt, const char *s)
{
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 256;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    char *arg;
    if (asprintf(&arg, fmt, s) < 0)
        return -1;
    a->v[a->n++] = arg;
    a->v[a->n] = NULL;
    return 0;
}

/* -Wl,--wrap=X, and when forced: -u __wrap_X (the wrapper is in the link
 * even if only a library appended later by the driver refers to X) and
 * -u X (libc's X is extracted, so __real_X is set). */
static int push_wraps(struct argbuf *a, const char *const *names, int force)
{
    for (const char *const *n = names; *n; n++) {
        if (push(a, "-Wl,--wrap=%s", *n) < 0)
            return -1;
        if (force && (push(a, "-Wl,--undefined=__wrap_%s", *n) < 0 ||
                      push(a, "-Wl,--undefined=%s", *n) < 0))
            return -1;
    }
    return 0;
}

int cmd_link(int argc, char **argv)
{
    struct argbuf extra_u = { 0 };
    int verbose = 0, i = 1;
    const char *profiler = "jprof";
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(link_usage, stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--profiler")) {
            if (i + 1 >= argc || !strcmp(argv[i + 1], "--"))
                return cli_usage_error("link", "%s needs a profiler name (or 'none')", a);
            profiler = argv[++i];
        } else if (!strncmp(a, "--profiler=", 11)) {
            profiler = a + 11;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "-u") || !strcmp(a, "--undefined")) {
            if (i + 1 >= argc || !strcmp(argv[i + 1], "--"))
                return cli_usage_error("link", "%s needs a symbol name", a);
            if (push(&extra_u, "-Wl,--undefined=%s", argv[++i]) < 0)
                return cli_fail("link: out of memory");
        } else if (!strncmp(a, "--undefined=", 12)) {
            if (push(&extra_u, "-Wl,--undefined=%s", a + 12) < 0)
                return cli_fail("link: out of memory");
        } else {
            return cli_usage_error("link", "unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return cli_usage_error("link", "put '--' before the link command: hookit link [-u SYM]... -- CC ARGS...");
    if (i + 1 >= argc)
        return cli_usage_error("link", "no compiler command given after '--'");
    int cc_argc = argc - i - 1;
    char **cc_argv = argv + i + 1;

    static const char *const no_link[] = { "-c", "-S", "-E", "-M", "-MM", "-shared", NULL };
    struct argbuf a = { 0 };
    for (int k = 0; k < cc_argc; k++)
        if (push(&a, "%s", cc_argv[k]) < 0)
            return cli_fail("link: out of memory");
    if (!has_arg(cc_argc, cc_argv, no_link)) {
        static const char *const static_flags[] = { "-static", "-static-pie", NULL };
        int fully_static = has_arg(cc_argc, cc_argv, static_flags);
        char *lib = find_lib("libhookit.a");
        if (!lib)
            return EXIT_FAIL;
        int rc = push_wraps(&a, wrapped_main, 0) | push_wraps(&a, wrapped_forced, 1) |
                 push_wraps(&a, wrapped_where_called, 0);
        if (!fully_static)
            rc |= push_wraps(&a, wrapped_dynamic_only, 1);
        for (int k = 0; k < extra_u.n; k++)
            rc |= push(&a, "%s", extra_u.v[k]);
        rc |= push(&a, "%s", lib);
        free(lib);
        if (strcmp(profiler, "none") != 0) {
            /* The profiler plugin, linked in: libhookit finds HookitStart. */
            char name[256];
            snprintf(name, sizeof name, "hookit/lib%s.a", profiler);
            char *plugin = strchr(profiler, '/') ? realpath(profiler, NULL) : find_lib(name);
            char *a2n = find_lib("liba2n.a");
            if (!plugin || !a2n) {
                if (!plugin && strchr(profiler, '/'))
                    cli_fail("link: no profiler archive %s", profiler);
                return EXIT_FAIL;
            }
            rc |= push(&a, "%s", "-Wl,--undefined=HookitStart");
            rc |= push(&a, "%s", plugin) | push(&a, "%s", a2n);
            for (const char *const *l = fully_static ? profiler_libs_static : profiler_libs_dynamic;
                 *l; l++)
                if (strcmp(*l, "-lsframe") != 0 || have_static_lib("libsframe.a"))
                    rc |= push(&a, "%s", *l);
            free(plugin);
            free(a2n);
        }
        for (const char *const *l = link_libs; *l; l++)
            rc |= push(&a, "%s", *l);
        if (rc)
            return cli_fail("link: out of memory");
    }
    if (verbose) {
        for (int k = 0; k < a.n; k++)
            fprintf(stderr, "%s%s", k ? " " : "", a.v[k]);
        fputc('\n', stderr);
    }
    fflush(stdout);
    execvp(a.v[0], a.v);
    int e = errno;
    fprintf(stderr, "hookit: link: %s: %s\n", a.v[0],
            e == ENOENT && !strchr(a.v[0], '/') ? "command not found" : strerror(e));
    return 127;
}
