/*
 * Source lines read from the binaries after the run.  Reading DWARF at the
 * end of the profiled process costs it tens of megabytes and milliseconds
 * (JPROFOPTS=lines), so by default profiles carry no lines and the tools
 * find them instead, when the binary is still the one that ran.
 *
 * A profile keeps each function's name, module base name and run-time
 * address, but not where the module was loaded.  So a function is found in
 * the object file by its name (a2n_file_find), and the run-time address
 * checks the match: a module is loaded at a page-aligned bias, so every
 * function's run-time address minus its address in the file must be a
 * multiple of the page size (ASLR moves whole pages; profiles of separate
 * runs merged into one differ by pages, which this allows).  A binary that
 * was rebuilt since the run fails that test, or was modified after the run
 * started; either way its lines could be wrong, so none are given.
 */
#include "tools/srclines.h"

#include <hookit/a2n.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The smallest page size: a load bias is a multiple of it everywhere. */
#define PAGE 4096u
#define MAX_CANDIDATES 32      /* functions of one name in one file (static ones) */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The program's path as the profile has it, without the " (deleted)" the
 * kernel adds to a program removed while it ran. */
static void exe_path(const struct profile *p, char *out, size_t size)
{
    const char *exe = p->process.exe ? p->process.exe : "";
    size_t len = strlen(exe);
    const char *deleted = " (deleted)";
    if (len > strlen(deleted) && !strcmp(exe + len - strlen(deleted), deleted))
        len -= strlen(deleted);
    snprintf(out, size, "%.*s", (int)len, exe);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A library: next to the program, else on LD_LIBRARY_PATH.  0 when found. */
static int find_library(const char *exe, const char *module, char *out, size_t size)
{
    const char *slash = strrchr(exe, '/');
    if (slash) {
        snprintf(out, size, "%.*s/%s", (int)(slash - exe), exe, module);
        if (is_file(out))
            return 0;
    }
    const char *dirs = getenv("LD_LIBRARY_PATH");
    while (dirs && *dirs) {
        size_t len = strcspn(dirs, ":");
        if (len) {
            snprintf(out, size, "%.*s/%s", (int)len, dirs, module);
            if (is_file(out))
                return 0;
        }
        dirs += len + (dirs[len] == ':');
    }
    return -1;
}

/* A function the tools should look up: a native function with an address
 * that has no line yet, named by a symbol (not "module+0xOFF"). */
static int wants_line(const struct prof_func *f, const char *module)
{
    if (!f->addr || f->file || !f->name || !*f->name || strcmp(f->module ? f->module : "", module))
        return 0;
    size_t m = strlen(module);
    return !(strncmp(f->name, module, m) == 0 && strncmp(f->name + m, "+0x", 3) == 0);
}

/* Where f is in the file: the one function of its name whose address
 * agrees with the run-time one (a whole number of pages apart).  0 and
 * *addr; 1 when the file has no function of that name, or several that
 * agree (two static functions of one name: which one is unknown); -1 when
 * it has some and none of them is where the profile saw it. */
static int locate(struct a2n_file *obj, const struct prof_func *f, uint64_t *addr)
{
    uint64_t cand[MAX_CANDIDATES];
    size_t n = a2n_file_find(obj, f->name, cand, MAX_CANDIDATES), found = 0;
    for (size_t i = 0; i < n && i < MAX_CANDIDATES; i++)
        if ((f->addr - cand[i]) % PAGE == 0) {
            *addr = cand[i];
            found++;
        }
    return found == 1 ? 0 : found || !n ? 1 : -1;
}

struct module_lines {
    struct profile *p;
    const char *module, *path, *cmd, *profile_path;
};

/* Once per binary: the profiles of a fork family share their program. */
static void no_lines(const struct module_lines *m, const char *fmt, const char *detail)
{
    static char said[PATH_MAX];
    if (!strcmp(said, m->path))
        return;
    snprintf(said, sizeof said, "%s", m->path);
    fprintf(stderr, "hookit: %s: %s: no source lines: %s ", m->cmd, m->profile_path, m->path);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
}

/* The build-id the profile recorded for the module (profile format 1.1)
 * against the file's: 1 when they are equal (the file is the one that ran,
 * whatever its date), 0 when the profile has none (an older profile: the
 * date decides), -1 when they differ or the file has none (said once). */
static int same_build(const struct module_lines *m)
{
    char key[300], hex[A2N_BUILD_ID_MAX], detail[2 * A2N_BUILD_ID_MAX + 64];
    snprintf(key, sizeof key, "build_id:%s", m->module);
    const char *want = profile_get_meta(m->p, key);
    if (!want || !*want)
        return 0;
    if (a2n_build_id_file(m->path, hex, sizeof hex) != 0) {
        snprintf(detail, sizeof detail, "has no build-id, the profile's is %s", want);
        no_lines(m, "is not the binary that ran (%s: rebuilt?)", detail);
        return -1;
    }
    if (strcmp(hex, want) != 0) {
        snprintf(detail, sizeof detail, "build-id %s, the profile's is %s", hex, want);
        no_lines(m, "is not the binary that ran (%s: rebuilt?)", detail);
        return -1;
    }
    return 1;
}

/* The file is the one that ran: its build-id the profile's when the
 * profile has one, else not modified after the run started; and
 * every function it has a whole number of pages from where the profile saw
 * it (and at least one function found). */
static int fill_module(const struct module_lines *m)
{
    struct profile *p = m->p;
    struct stat st;
    if (stat(m->path, &st) != 0) {
        no_lines(m, "%s", errno == ENOENT ? "is gone (deleted since the run?)" : strerror(errno));
        return 0;
    }
    int same = same_build(m);
    if (same < 0)
        return 0;
    uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    if (!same && p->process.start_ns && mtime > p->process.start_ns) {
        no_lines(m, "%s", "was modified after the run started (rebuilt?)");
        return 0;
    }
    struct a2n_file *obj = a2n_file_open(m->path);
    if (!obj) {
        no_lines(m, "%s", "has no function symbols (stripped or not an object file)");
        return 0;
    }
    uint64_t addr;
    /* A name the file does not have is left without a line (a function
     * the binary lost, with others unchanged, lines and all); one it has
     * elsewhere is a mismatch. */
    uint32_t checked = 0, differ = 0, missing = 0;
    for (uint32_t i = 0; i < p->nfuncs; i++)
        if (wants_line(&p->funcs[i], m->module)) {
            int where = locate(obj, &p->funcs[i], &addr);
            checked++;
            differ += where < 0;
            missing += where > 0;
        }
    if (differ || (checked && missing == checked)) {
        char detail[128];
        snprintf(detail, sizeof detail, "%u of %u functions", differ ? differ : missing, checked);
        no_lines(m, "is not the binary that ran (%s not where the profile saw them: rebuilt?)",
                 detail);
        a2n_file_close(obj);
        return 0;
    }
    int rc = 0;
    for (uint32_t i = 0; i < p->nfuncs && rc == 0; i++) {
        struct prof_func *f = &p->funcs[i];
        const char *file;
        unsigned line;
        if (!wants_line(f, m->module) || locate(obj, f, &addr) != 0 ||
            a2n_file_line(obj, addr, &file, &line) != 0)
            continue;
        f->file = profile_intern(p, file);
        f->line = line;
        rc = f->file ? 0 : -1;
    }
    a2n_file_close(obj);
    return rc;
}

int srclines_fill(struct profile *p, const char *cmd, const char *path)
{
    char exe[PATH_MAX], lib[PATH_MAX];
    exe_path(p, exe, sizeof exe);
    const char *exe_module = base_name(exe);
    /* Each module once: the first function that wants a line names it. */
    const char **done = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *done);
    size_t ndone = 0;
    int rc = done ? 0 : -1;
    for (uint32_t i = 0; i < p->nfuncs && rc == 0; i++) {
        const char *module = p->funcs[i].module ? p->funcs[i].module : "";
        if (!*module || !wants_line(&p->funcs[i], module))
            continue;
        size_t k = 0;
        while (k < ndone && strcmp(done[k], module))
            k++;
        if (k < ndone)
            continue;
        done[ndone++] = module;
        struct module_lines m = { p, module, exe, cmd, path };
        if (*exe && strcmp(module, exe_module) != 0) {
            /* A library: silently none when it is not found (system
             * libraries are not instrumented). */
            if (find_library(exe, module, lib, sizeof lib) != 0)
                continue;
            m.path = lib;
        } else if (!*exe) {
            continue;
        }
        rc = fill_module(&m);
    }
    free(done);
    return rc;
}
