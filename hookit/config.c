/* Configuration from the environment, read once at start.  A bad value gets
 * one line naming the variable and the valid values; the default stays. */
#include "hookit/internal.h"

#include <dlfcn.h>
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

HK_NOINSTR void hk_config_read(void)
{
    hk_config.debug = read_bool("HOOKIT_DEBUG", 0);
    hk_config.start_on = read_bool("HOOKIT_PROFILING", 1);
    read_path("HOOKIT_OUTPUT", hk_config.output_dir, sizeof hk_config.output_dir, ".");
    read_path("HOOKIT_PROFILER", hk_config.profiler, sizeof hk_config.profiler, "libjprof.so");
    find_plugin_dir();
    secure_mode();
    make_absolute(hk_config.output_dir, sizeof hk_config.output_dir);
}
