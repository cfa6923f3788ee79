/*
 * hookit run: run an instrumented program that is not linked with hookit,
 * by preloading libhookit.so (found beside this hookit binary, in
 * <bindir>/../lib/).
 */
#include "common/foreign.h"
#include "tools/cli.h"

#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const run_usage =
    "usage: hookit run [-o DIR] [-p PROFILER] [--client X.so] [--all-processes]\n"
    "                  [--exclude PATS] [--include PATS] [--max-depth N] -- PROG [ARGS...]\n"
    "\n"
    "Run PROG (built with -finstrument-functions, not linked with hookit) with\n"
    "libhookit.so preloaded, so it writes a profile when it ends.  The '--' is\n"
    "required.  hookit execs PROG: the exit status is PROG's.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR        write the profile to DIR (sets HOOKIT_OUTPUT)\n"
    "  -p, --profiler PLUGIN   the profiler plugin, a path or a name in hookit's\n"
    "                          plugin directory: libhktrace.so or hktrace (sets\n"
    "                          HOOKIT_PROFILER; an unknown name is refused)\n"
    "      --client X.so       a libmonitor-style client (monitor_* callbacks),\n"
    "                          preloaded just before libhookit.so\n"
    "      --all-processes     a profile from every process, also those that ran\n"
    "                          no instrumented code (a shell of sh -c '...'); by\n"
    "                          default they write none (HOOKIT_ALL_PROCESSES=0)\n"
    "      --exclude PATS      record no call of the functions PATS match: globs\n"
    "                          separated by '@', each a name as hookit report shows\n"
    "                          it, module:GLOB or file:GLOB (docs/filters.md);\n"
    "                          their time and callees go to their callers\n"
    "      --include PATS      record only the functions PATS match\n"
    "      --max-depth N       record frames N deep at most\n"
    "                          (these three add to JPROFOPTS)\n"
    "  -h, --help              this help\n"
    "\n"
    "libhookit.so is put first in LD_PRELOAD, before the entries already there.\n"
    "The dynamic loader ignores LD_PRELOAD for set-user-ID and set-group-ID\n"
    "programs; hookit warns and runs such a program unprofiled.\n"
    "If PROG cannot be executed, the exit status is 127.  When PROG ran no\n"
    "instrumented function, it says so: \"no instrumented function ran: was PROG\n"
    "built with -finstrument-functions?\".\n";

/* <dir of /proc/self/exe>/../lib/libhookit.so, made absolute and canonical. */
static char *find_libhookit(void)
{
    char self[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) {
        cli_fail("run: cannot find the hookit binary (/proc/self/exe): %s", strerror(errno));
        return NULL;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(path, sizeof path, "%s/../lib/libhookit.so", self);
    char *lib = realpath(path, NULL);
    if (!lib) {
        cli_fail("run: cannot find libhookit.so at %s: %s", path, strerror(errno));
    } else if (strpbrk(lib, " :")) {
        /* The loader splits LD_PRELOAD at spaces and colons. */
        cli_fail("run: cannot preload %s: LD_PRELOAD cannot hold a path with a space or a colon",
                 lib);
        free(lib);
        lib = NULL;
    }
    return lib;
}

/* The plugins in dir (lib*.so, as names without "lib" and ".so") into
 * buf, joined by ", ". */
static void plugin_names(const char *dir, char *buf, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t len = 0;
    buf[0] = '\0';
    while (d && (e = readdir(d)) && len < size) {
        size_t n = strlen(e->d_name);
        if (n > 6 && !strncmp(e->d_name, "lib", 3) && !strcmp(e->d_name + n - 3, ".so"))
            len += (size_t)snprintf(buf + len, size - len, "%s%.*s", len ? ", " : "", (int)(n - 6),
                                    e->d_name + 3);
    }
    if (d)
        closedir(d);
}

/* -p NAME as libhookit will load it: a path, or a plugin of hookit's
 * plugin directory (next to libhookit.so) by its file name, or by its
 * short name as `hookit link -p` takes it (hktrace: libhktrace.so).  A
 * name that is none of these would leave the program unprofiled, so it is
 * refused here, with the plugins there are.  The path to set, malloc'd,
 * or NULL with the message printed. */
static char *resolve_profiler(const char *name, const char *libhookit)
{
    if (strchr(name, '/')) {
        char *abs = realpath(name, NULL);
        if (!abs)
            cli_fail("run: -p %s: %s", name, strerror(errno));
        return abs;
    }
    char dir[PATH_MAX], path[PATH_MAX + 300], names[1024];
    snprintf(dir, sizeof dir, "%s", libhookit);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    static const char *const forms[] = { "%s/hookit/%s", "%s/hookit/lib%s.so", "%s/hookit/%s.so" };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(path, sizeof path, forms[i], dir, name);
        if (access(path, R_OK) == 0)
            return strdup(path);
    }
    snprintf(path, sizeof path, "%s/hookit", dir);
    plugin_names(path, names, sizeof names);
    cli_usage_error("run",
                    "no profiler plugin '%s' in %s: the plugins are %s (or give a path "
                    "to a .so)",
                    name, path, *names ? names : "none");
    return NULL;
}

/* The file execvp would run for prog, or NULL. */
static char *resolve_prog(const char *prog)
{
    if (strchr(prog, '/'))
        return strdup(prog);
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/bin:/usr/bin";
    for (const char *p = path; ; ) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        char *cand = malloc(len + strlen(prog) + 2);
        if (!cand)
            return NULL;
        sprintf(cand, "%.*s%s%s", (int)len, p, len ? "/" : "", prog);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        if (!colon)
            return NULL;
        p = colon + 1;
    }
}

static void warn_if_setid(const char *prog)
{
    char *file = resolve_prog(prog);
    struct stat st;
    if (file && stat(file, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
        fprintf(stderr,
                "hookit: run: warning: %s is set-%s-ID: the dynamic loader ignores "
                "LD_PRELOAD for it, so it will run without hookit and write no profile\n",
                file, (st.st_mode & S_ISUID) ? "user" : "group");
    }
    free(file);
}

/* Length of a sanitizer runtime at the head of LD_PRELOAD (libasan.so.8,
 * libclang_rt.asan-x86_64.so...), 0 if none: it must stay the first object
 * loaded, or the program dies at start.  Not libtsan: TSan's runtime must
 * come after libhookit (tsan_after_libhookit). */
static size_t sanitizer_head(const char *preload)
{
    static const char *const runtimes[] = { "libasan", "libubsan", "libclang_rt.asan" };
    size_t n = strcspn(preload, ": ");
    const char *base = preload + n;
    while (base > preload && base[-1] != '/')
        base--;
    for (size_t i = 0; i < sizeof runtimes / sizeof *runtimes; i++)
        if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
            return n;
    return 0;
}

/* hookit built with TSan (make SANITIZE=thread), so libhookit is too: TSan's
 * runtime must load after libhookit, whose thread trampoline must run before
 * TSan's (TSan's crashes on hooks it has not set up yet), and before libc,
 * whose functions TSan intercepts.  Returns "LIB:TSAN" or NULL. */
static char *tsan_after_libhookit(const char *lib, const char *old)
{
#ifdef __SANITIZE_THREAD__
    Dl_info info;
    if (!dladdr((void *)__tsan_init, &info) || !info.dli_fname || strchr(info.dli_fname, ':')
        || (old && strstr(old, "libtsan")))
        return NULL;
    char *v = malloc(strlen(lib) + strlen(info.dli_fname) + 2);
    if (v)
        sprintf(v, "%s:%s", lib, info.dli_fname);
    return v;
#else
    (void)lib;
    (void)old;
    return NULL;
#endif
}

static int set_preload(const char *libhookit)
{
    const char *old = getenv("LD_PRELOAD");
    char *with_tsan = tsan_after_libhookit(libhookit, old);
    const char *lib = with_tsan ? with_tsan : libhookit;
    if (!old || !*old) {
        int rc = setenv("LD_PRELOAD", lib, 1);
        free(with_tsan);
        return rc;
    }
    char *v = malloc(strlen(lib) + strlen(old) + 2);
    if (!v) {
        free(with_tsan);
        return -1;
    }
    size_t head = sanitizer_head(old);
    if (head)
        sprintf(v, "%.*s:%s%s", (int)head, old, lib, old + head);
    else
        sprintf(v, "%s:%s", lib, old);
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    free(with_tsan);
    return rc;
}

/* "-o" or "--output", as the user typed the option whose argument is
 * optarg: the word before it, or the word it is attached to ("-oDIR",
 * "--output=DIR"). */
static const char *option_spelling(char **argv, int optind, const char *optarg)
{
    const char *word = argv[optind - 1] == optarg && optind >= 2 ? argv[optind - 2] : argv[optind - 1];
    return strncmp(word, "--", 2) == 0 ? "--output" : "-o";
}

/* HOOKIT_OUTPUT made absolute, so it still holds if the program changes
 * directory; HOOKIT_RUN_OUTPUT keeps the option and the directory as
 * typed ("-o out"), so a directory libhookit cannot use is reported in the
 * user's words, not as a variable they never set. */
static int set_output(const char *dir, const char *opt)
{
    char *typed = malloc(strlen(opt) + strlen(dir) + 2);
    if (!typed)
        return -1;
    sprintf(typed, "%s %s", opt, dir);
    int rc = setenv("HOOKIT_RUN_OUTPUT", typed, 1);
    free(typed);
    char cwd[PATH_MAX];
    if (rc != 0 || dir[0] == '/' || !getcwd(cwd, sizeof cwd))
        return rc ? rc : setenv("HOOKIT_OUTPUT", dir, 1);
    char *abs = malloc(strlen(cwd) + strlen(dir) + 2);
    if (!abs)
        return -1;
    sprintf(abs, "%s/%s", cwd, dir);
    rc = setenv("HOOKIT_OUTPUT", abs, 1);
    free(abs);
    return rc;
}

/* key=value added to JPROFOPTS, one item per '@'-separated pattern (an
 * item holds 255 bytes at most); a ',' would split an item, so a pattern
 * with one is refused ('?' matches it). */
static int add_jprofopts(const char *key, const char *value)
{
    if (strchr(value, ','))
        return cli_usage_error("run",
                               "a pattern cannot hold ',' (it separates JPROFOPTS' options): use '?' for it");
    const char *old = getenv("JPROFOPTS");
    size_t size = (old ? strlen(old) : 0) + 2 * strlen(value) * (strlen(key) + 2) + strlen(key) + 8;
    char *opts = malloc(size), *end = opts;
    if (!opts)
        return cli_fail("run: out of memory");
    end += sprintf(end, "%s", old ? old : "");
    for (const char *p = value; *p;) {
        size_t len = strcspn(p, "@");
        if (len)
            end += sprintf(end, "%s%s=%.*s", end > opts ? "," : "", key, (int)len, p);
        p += len + (p[len] == '@');
    }
    int rc = setenv("JPROFOPTS", opts, 1);
    free(opts);
    return rc ? cli_fail("run: JPROFOPTS: %s", strerror(errno)) : 0;
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "profiler", required_argument, NULL, 'p' },
        { "client", required_argument, NULL, 'C' },
        { "all-processes", no_argument, NULL, 'A' },
        { "exclude", required_argument, NULL, 'X' },
        { "include", required_argument, NULL, 'I' },
        { "max-depth", required_argument, NULL, 'D' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *output = NULL, *output_opt = "-o", *profiler = NULL, *client = NULL;
    int c, rc, all_processes = 0;
    cli_reset_getopt();
    /* "+": PROG's own options are never ours. */
    while ((c = getopt_long(argc, argv, "+:o:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            output_opt = option_spelling(argv, optind, optarg);
            break;
        case 'p':
            profiler = optarg;
            break;
        case 'C':
            client = optarg;
            break;
        case 'A':
            all_processes = 1;
            break;
        case 'X':
        case 'I':
        case 'D':
            if (c == 'D' && strspn(optarg, "0123456789") != strlen(optarg))
                return cli_usage_error("run", "--max-depth needs a number");
            if ((rc = add_jprofopts(c == 'X' ? "exclude" : c == 'I' ? "include" : "maxdepth", optarg)) != 0)
                return rc;
            break;
        case 'h':
            fputs(run_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("run", c, argv);
        }
    }
    if (optind < 2 || strcmp(argv[optind - 1], "--") != 0)
        return cli_usage_error("run", "put '--' before the program: hookit run [OPTIONS] -- PROG [ARGS...]");
    if (optind >= argc)
        return cli_usage_error("run", "no program given after '--'");
    if (output && !*output)
        return cli_usage_error("run", "-o needs a directory");

    char *lib = find_libhookit();
    if (!lib)
        return EXIT_FAIL;
    char *plugin = NULL;
    if (profiler && !(plugin = resolve_profiler(profiler, lib))) {
        free(lib);
        return strchr(profiler, '/') ? EXIT_FAIL : EXIT_USAGE;
    }
    rc = set_preload(lib);
    free(lib);
    if (rc == 0 && client) {
        /* Before libhookit.so, so its monitor_* override libhookit's defaults. */
        char *abs = realpath(client, NULL);
        if (!abs)
            return cli_fail("run: --client %s: %s", client, strerror(errno));
        rc = set_preload(abs);
        free(abs);
    }
    if (rc == 0 && output)
        rc = set_output(output, output_opt);
    if (rc == 0 && plugin)
        rc = setenv("HOOKIT_PROFILER", plugin, 1);
    free(plugin);
    if (rc == 0)
        rc = setenv("HOOKIT_ALL_PROCESSES", all_processes ? "1" : "0", 1);
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());      /* PROG keeps it: hookit execs */
    if (rc == 0)
        rc = setenv("HOOKIT_RUN_PID", pid, 1);
    if (rc != 0)
        return cli_fail("run: cannot set the environment: %s", strerror(errno));

    const char *prog = argv[optind];
    warn_if_setid(prog);
    fflush(stdout);
    execvp(prog, argv + optind);
    int e = errno;
    fprintf(stderr, "hookit: run: %s: %s\n", prog,
            e == ENOENT && !strchr(prog, '/') ? "command not found" : strerror(e));
    return 127;
}
