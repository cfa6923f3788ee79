/* Configuration from the environment, read once at start.  A bad value gets
 * one line naming the variable and the valid values; the default stays. */
#include "hookit/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

struct hk_config hk_config;

HK_NOINSTR static int read_bool(const char *var, int dflt)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return dflt;
    if (!strcmp(v, "0"))
        return 0;
    if (!strcmp(v, "1"))
        return 1;
    hk_log("%s='%.64s' is not valid: use 0 or 1 (using %d)", var, v, dflt);
    return dflt;
}

HK_NOINSTR static void read_path(const char *var, char *dst, size_t size, const char *dflt)
{
    const char *v = getenv(var);
    if (v && *v && strlen(v) < size) {
        strcpy(dst, v);
        return;
    }
    if (v && *v)
        hk_log("%s is too long (at most %zu bytes): using '%s'", var, size - 1, dflt);
    strcpy(dst, dflt);
}

/* Plugins live in <directory of libhookit.so>/hookit, in the build tree as
 * after `make install`, so a relocated installation keeps working. */
HK_NOINSTR static void find_plugin_dir(void)
{
    Dl_info info;
    const char *fallback = HOOKIT_PLUGIN_DIR;
    if (dladdr((void *)&find_plugin_dir, &info) && info.dli_fname && info.dli_fname[0] == '/') {
        const char *slash = strrchr(info.dli_fname, '/');
        size_t len = (size_t)(slash - info.dli_fname);
        if (len + sizeof "/hookit" < sizeof hk_config.plugin_dir) {
            memcpy(hk_config.plugin_dir, info.dli_fname, len);
            strcpy(hk_config.plugin_dir + len, "/hookit");
            return;
        }
    }
    strcpy(hk_config.plugin_dir, fallback);
}

/* The output directory as an absolute path, fixed at start: a program that
 * changes directory later still writes where it was started. */
HK_NOINSTR static void make_absolute(char *dir, size_t size)
{
    char cwd[4096];
    if (dir[0] == '/' || !getcwd(cwd, sizeof cwd))
        return;
    char joined[8200];
    if (!strcmp(dir, "."))
        snprintf(joined, sizeof joined, "%s", cwd);
    else
        snprintf(joined, sizeof joined, "%s/%s", cwd, dir);
    if (strlen(joined) < size)
        strcpy(dir, joined);
}

/* A set-user-ID or set-group-ID program (AT_SECURE) runs with rights its
 * invoker lacks, under the invoker's environment: that environment may not
 * name code for it to load, nor a directory for it to write into that the
 * real user does not own. */
HK_NOINSTR static void secure_mode(void)
{
    if (!getauxval(AT_SECURE))
        return;
    if (strchr(hk_config.profiler, '/')) {
        hk_log("HOOKIT_PROFILER='%.200s' ignored: a set-user-ID or set-group-ID program only "
               "loads profilers by name from %.200s (using libjprof.so)",
               hk_config.profiler, hk_config.plugin_dir);
        strcpy(hk_config.profiler, "libjprof.so");
    }
    struct stat st;
    if (strcmp(hk_config.output_dir, ".") != 0
        && (stat(hk_config.output_dir, &st) != 0 || st.st_uid != getuid())) {
        hk_log("HOOKIT_OUTPUT='%.200s' ignored: a set-user-ID or set-group-ID program only "
               "writes into directories the real user owns (using the current directory)",
               hk_config.output_dir);
        strcpy(hk_config.output_dir, ".");
    }
}

/* mkdir -p: each missing component made with mode 0777 less the umask, as
 * mkdir(1) does.  0, or -1 with errno. */
HK_NOINSTR static int make_dirs(const char *dir)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = c;
        if (!c)
            return 0;
    }
}

/* Whether dir can take our files: created when missing (with its
 * parents), a directory, writable and searchable by us.  0, or -1 with
 * errno saying why not. */
HK_NOINSTR static int usable_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || make_dirs(dir) != 0 || stat(dir, &st) != 0)
            return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return access(dir, W_OK | X_OK);
}

/* Where profiles go when the output directory cannot take them: $TMPDIR,
 * else the current directory, else /tmp (only checked, never created). */
HK_NOINSTR static void find_fallback(void)
{
    char cwd[4096];
    const char *tmp = getenv("TMPDIR");
    struct stat st;
    const char *cands[3] = { tmp && tmp[0] == '/' ? tmp : NULL,
                             getcwd(cwd, sizeof cwd) ? cwd : NULL, "/tmp" };
    for (int i = 0; i < 3; i++) {
        if (cands[i] && strlen(cands[i]) < sizeof hk_config.fallback_dir
            && stat(cands[i], &st) == 0 && S_ISDIR(st.st_mode) && access(cands[i], W_OK | X_OK) == 0) {
            strcpy(hk_config.fallback_dir, cands[i]);
            return;
        }
    }
    strcpy(hk_config.fallback_dir, "/tmp");
}

/* Whether dir (absolute) is what `hookit run` made of typed: typed itself,
 * or the directory it ran in followed by typed. */
HK_NOINSTR static int made_from(const char *dir, const char *typed)
{
    size_t d = strlen(dir), t = strlen(typed);
    if (typed[0] == '/')
        return strcmp(dir, typed) == 0;
    return d > t && dir[d - t - 1] == '/' && strcmp(dir + d - t, typed) == 0;
}

/* How the user named the output directory, for the line that says it
 * cannot be used: "hookit run -o 'out' (/abs/out)" when HOOKIT_OUTPUT is
 * still what hookit run made of its -o (HOOKIT_RUN_OUTPUT="-o out"), else
 * "HOOKIT_OUTPUT='/abs/out'". */
HK_NOINSTR static void output_origin(char *buf, size_t size)
{
    const char *run = getenv("HOOKIT_RUN_OUTPUT");
    const char *typed = run ? strchr(run, ' ') : NULL;
    if (typed && typed[1] && made_from(hk_config.output_dir, typed + 1)) {
        int optlen = (int)(typed - run);
        typed++;
        if (typed[0] == '/')
            snprintf(buf, size, "hookit run %.*s '%.1000s'", optlen, run, typed);
        else
            snprintf(buf, size, "hookit run %.*s '%.1000s' (%.1000s)", optlen, run, typed,
                     hk_config.output_dir);
        return;
    }
    snprintf(buf, size, "HOOKIT_OUTPUT='%.1000s'", hk_config.output_dir);
}

/* The output directory is made when missing; one that cannot be used is
 * reported now, in one line, and the fallback takes its place, so the run
 * still ends with its profile. */
HK_NOINSTR static void prepare_output(void)
{
    int saved = errno;
    find_fallback();
    errno = saved;
    if (usable_dir(hk_config.output_dir) == 0) {
        errno = saved;
        return;
    }
    int e = errno;
    char origin[2200];
    output_origin(origin, sizeof origin);
    hk_log("%s cannot be used (%s): profiles go to %.1000s instead", origin, strerror(e),
           hk_config.fallback_dir);
    strcpy(hk_config.output_dir, hk_config.fallback_dir);
    hk_config.output_fallback = 1;
    errno = saved;
}

HK_NOINSTR void hk_config_read(void)
{
    hk_config.debug = read_bool("HOOKIT_DEBUG", 0);
    hk_config.start_on = read_bool("HOOKIT_PROFILING", 1);
    read_path("HOOKIT_OUTPUT", hk_config.output_dir, sizeof hk_config.output_dir, ".");
    read_path("HOOKIT_PROFILER", hk_config.profiler, sizeof hk_config.profiler, "libjprof.so");
    find_plugin_dir();
    secure_mode();
    make_absolute(hk_config.output_dir, sizeof hk_config.output_dir);
    prepare_output();
}
