/*
 * dlopen / dlclose: monitor_pre_dlopen, monitor_dlopen (and the internal
 * clients' post_dlopen on success, so A2N reloads: one dlopen may map several
 * libraries), monitor_dlclose, monitor_post_dlclose (post_dlclose).
 *
 * glibc searches a bare name with the *caller's* RUNPATH; the caller is
 * now libhookit, so a name not found is searched again in the RPATH/RUNPATH
 * of the object that called us ($ORIGIN expanded).
 */
#include "lifecycle/internal.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#ifndef HOOKIT_STATIC
/* Search dir list `dirs` (':'-separated, $ORIGIN = origin) for name. */
static void *lc_dlopen_in(const char *dirs, const char *origin, const char *name, int flags)
{
    char path[PATH_MAX];
    while (*dirs) {
        size_t l = strcspn(dirs, ":");
        size_t o = 0;
        for (size_t i = 0; i < l && o < sizeof path - 1;) {
            if (!strncmp(dirs + i, "$ORIGIN", 7) || !strncmp(dirs + i, "${ORIGIN}", 9)) {
                size_t ol = strlen(origin);
                if (o + ol >= sizeof path - 1)
                    break;
                memcpy(path + o, origin, ol);
                o += ol;
                i += dirs[i + 1] == '{' ? 9 : 7;
            } else {
                path[o++] = dirs[i++];
            }
        }
        if (o && o + strlen(name) + 2 < sizeof path) {
            path[o] = '/';
            strcpy(path + o + 1, name);
            if (access(path, F_OK) == 0) {
                void *h = REAL(dlopen)(path, flags);
                if (h)
                    return h;
            }
        }
        dirs += l;
        if (*dirs == ':')
            dirs++;
    }
    return NULL;
}

static void *lc_dlopen_as_caller(const char *name, int flags, void *caller)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) || !map || !map->l_ld)
        return NULL;
    const char *strtab = NULL, *runpath = NULL, *rpath = NULL;
    ElfW(Addr) run_off = 0, r_off = 0;
    int have_run = 0, have_r = 0;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)d->d_un.d_ptr;
        else if (d->d_tag == DT_RUNPATH)
            run_off = d->d_un.d_val, have_run = 1;
        else if (d->d_tag == DT_RPATH)
            r_off = d->d_un.d_val, have_r = 1;
    }
    if (!strtab || (!have_run && !have_r))
        return NULL;
    runpath = have_run ? strtab + run_off : NULL;
    rpath = have_r ? strtab + r_off : NULL;
    char origin[PATH_MAX];
    const char *obj = info.dli_fname && *info.dli_fname ? info.dli_fname : "/proc/self/exe";
    if (!realpath(obj, origin))
        return NULL;
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = 0;
    void *h = runpath ? lc_dlopen_in(runpath, origin, name, flags) : NULL;
    if (!h && rpath)
        h = lc_dlopen_in(rpath, origin, name, flags);
    return h;
}
#endif

static void *lc_dlopen(const char *path, int flags, void *caller)
{
    lc_ensure_init();
    lc_check_pid();
    int saved = errno;
    monitor_pre_dlopen(path, flags);
    errno = saved;
    void *h = REAL(dlopen)(path, flags);
#ifndef HOOKIT_STATIC
    if (!h && path && !strchr(path, '/')) {
        void *h2 = lc_dlopen_as_caller(path, flags, caller);
        if (h2)
            h = h2;
        else
            REAL(dlopen)(path, flags);      /* leave dlerror() as glibc's */
    }
#endif
    saved = errno;
    if (h)
        LC_CLIENTS(post_dlopen, path, h);
    monitor_dlopen(path, flags, h);     /* NULL when it failed, as libmonitor */
    errno = saved;
    return h;
}

LC_API void *LC_WRAPPER(dlopen)(const char *path, int flags)
{
    return lc_dlopen(path, flags, __builtin_extract_return_addr(__builtin_return_address(0)));
}

LC_API int LC_WRAPPER(dlclose)(void *handle)
{
    lc_ensure_init();
    int saved = errno;
    monitor_dlclose(handle);
    LC_CLIENTS(pre_dlclose, handle);
    errno = saved;
    int r = REAL(dlclose)(handle);
    saved = errno;
    monitor_post_dlclose(handle, r);
    LC_CLIENTS(post_dlclose, handle);
    errno = saved;
    return r;
}

LC_API void *monitor_real_dlopen(const char *path, int flags)
{
    lc_ensure_init();
    return REAL(dlopen)(path, flags);
}

LC_API int monitor_real_dlclose(void *handle)
{
    lc_ensure_init();
    return REAL(dlclose)(handle);
}
