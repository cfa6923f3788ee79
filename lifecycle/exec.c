/*
 * exec: execve, execv, execvp, execvpe, execl, execlp, execle, fexecve, and
 * the spawns (posix_spawn, posix_spawnp).  The old image gets
 * fini_process(how=exec) first; a failed exec (missing file, EACCES, bad
 * interpreter) resumes monitoring with errno kept.  Children are followed:
 * unless HOOKIT_FOLLOW=0, the LD_PRELOAD entries and HOOKIT_* (and
 * JPROFOPTS) variables the process started with are put back into the new
 * program's environment when the application's envp lacks them.
 */
#include "lifecycle/internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* ---- following ------------------------------------------------------------------------ */
static char *lc_start_preload;          /* LD_PRELOAD's value at start */
static char **lc_start_vars;            /* "HOOKIT_X=v" and "JPROFOPTS=v" at start */
static int lc_nstart_vars;

static int lc_is_followed_var(const char *e)
{
    return !strncmp(e, "HOOKIT_", 7) || !strncmp(e, "JPROFOPTS=", 10);
}

void lc_follow_capture(void)
{
    const char *p = getenv("LD_PRELOAD");
    if (p && *p)
        lc_start_preload = strdup(p);
    int n = 0;
    for (char **e = environ; e && *e; e++)
        n += lc_is_followed_var(*e);
    if (!n)
        return;
    lc_start_vars = calloc(n, sizeof *lc_start_vars);
    if (!lc_start_vars)
        return;
    for (char **e = environ; e && *e; e++)
        if (lc_is_followed_var(*e) && strchr(*e, '='))
            lc_start_vars[lc_nstart_vars++] = strdup(*e);
}

static int lc_env_has(char *const envp[], const char *var)
{
    size_t len = strcspn(var, "=") + 1;
    for (char *const *e = envp; e && *e; e++)
        if (!strncmp(*e, var, len))
            return 1;
    return 0;
}

/* Does the ':'/' ' separated list contain entry [s, s+len)? */
static int lc_list_has(const char *list, const char *s, size_t len)
{
    while (*list) {
        size_t l = strcspn(list, ": ");
        if (l == len && !strncmp(list, s, len))
            return 1;
        list += l;
        while (*list == ':' || *list == ' ')
            list++;
    }
    return 0;
}

/* "LD_PRELOAD=" + the start entries missing from cur + cur, into out. */
static void lc_merge_preload(char *out, const char *cur)
{
    char *o = stpcpy(out, "LD_PRELOAD=");
    for (const char *p = lc_start_preload; *p;) {
        size_t l = strcspn(p, ": ");
        if (l && !lc_list_has(cur, p, l)) {
            if (o[-1] != '=')
                *o++ = ':';
            memcpy(o, p, l);
            o += l;
        }
        p += l;
        while (*p == ':' || *p == ' ')
            p++;
    }
    if (*cur && o[-1] != '=')
        *o++ = ':';
    strcpy(o, cur);
}

char **lc_follow_env(char *const envp[])
{
    if (!lc_cfg.follow || (!lc_start_preload && !lc_nstart_vars))
        return (char **)envp;
    size_t n = 0;
    const char *cur_preload = "";
    for (char *const *e = envp; e && *e; e++, n++)
        if (!strncmp(*e, "LD_PRELOAD=", 11))
            cur_preload = *e + 11;
    size_t slots = n + lc_nstart_vars + 2;
    size_t chars = lc_start_preload ? strlen(lc_start_preload) + strlen(cur_preload) + 16 : 0;
    char **out = lc_alloc(slots * sizeof *out + chars);
    if (!out)
        return (char **)envp;
    char *merged = (char *)(out + slots);
    size_t k = 0;
    int placed = 0;
    for (char *const *e = envp; e && *e; e++) {
        if (lc_start_preload && !strncmp(*e, "LD_PRELOAD=", 11)) {
            if (placed)
                continue;
            lc_merge_preload(merged, cur_preload);
            out[k++] = merged;
            placed = 1;
        } else {
            out[k++] = *e;
        }
    }
    if (lc_start_preload && !placed) {
        lc_merge_preload(merged, "");
        out[k++] = merged;
    }
    for (int i = 0; i < lc_nstart_vars; i++)
        if (!lc_env_has(envp, lc_start_vars[i]))
            out[k++] = lc_start_vars[i];
    out[k] = NULL;
    return out;
}

void lc_follow_free(char **env, char *const envp[])
{
    if (env != (char **)envp)
        lc_release(env);
}

/* ---- exec --------------------------------------------------------------------------- */
enum lc_exec_kind { LC_EXECVE, LC_EXECVPE, LC_FEXECVE };

static int lc_exec(enum lc_exec_kind kind, const char *path, int fd, char *const argv[],
                   char *const envp[])
{
    lc_ensure_init();
    lc_check_pid();
    char **env = lc_follow_env(envp);
    int ended = lc_end_for_exec();
    lc_signal_before_exec();
    int r;
    switch (kind) {
    case LC_EXECVE:
        r = REAL(execve)(path, argv, env);
        break;
    case LC_EXECVPE:
        r = REAL(execvpe)(path, argv, env);
        break;
    default:
        r = REAL(fexecve)(fd, argv, env);
        break;
    }
    int saved = errno;
    lc_signal_after_failed_exec();
    if (ended)
        lc_resume_after_failed_exec();
    lc_follow_free(env, envp);
    errno = saved;
    return r;
}

LC_API int LC_WRAPPER(execve)(const char *path, char *const argv[], char *const envp[])
{
    return lc_exec(LC_EXECVE, path, -1, argv, envp);
}

LC_API int LC_WRAPPER(execv)(const char *path, char *const argv[])
{
    return lc_exec(LC_EXECVE, path, -1, argv, environ);
}

LC_API int LC_WRAPPER(execvp)(const char *file, char *const argv[])
{
    return lc_exec(LC_EXECVPE, file, -1, argv, environ);
}

LC_API int LC_WRAPPER(execvpe)(const char *file, char *const argv[], char *const envp[])
{
    return lc_exec(LC_EXECVPE, file, -1, argv, envp);
}

LC_API int LC_WRAPPER(fexecve)(int fd, char *const argv[], char *const envp[])
{
    return lc_exec(LC_FEXECVE, NULL, fd, argv, envp);
}

/* execl & co: the variadic list becomes an argv on our stack. */
#define LC_COLLECT_ARGS(arg0, ap, argv_out, envp_out, with_env)            \
    size_t argc_ = 1;                                                      \
    va_start(ap, arg0);                                                    \
    while (va_arg(ap, const char *))                                       \
        argc_++;                                                           \
    va_end(ap);                                                            \
    char *argv_out[argc_ + 1];                                             \
    char *const *envp_out = environ;                                       \
    argv_out[0] = (char *)arg0;                                            \
    va_start(ap, arg0);                                                    \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                 \
        argv_out[i_] = va_arg(ap, char *);                                 \
    if (with_env)                                                          \
        envp_out = va_arg(ap, char *const *);                              \
    va_end(ap);

LC_API int LC_WRAPPER(execl)(const char *path, const char *arg, ...)
{
    va_list ap;
    LC_COLLECT_ARGS(arg, ap, argv, envp, 0);
    return lc_exec(LC_EXECVE, path, -1, argv, envp);
}

LC_API int LC_WRAPPER(execlp)(const char *file, const char *arg, ...)
{
    va_list ap;
    LC_COLLECT_ARGS(arg, ap, argv, envp, 0);
    return lc_exec(LC_EXECVPE, file, -1, argv, envp);
}

LC_API int LC_WRAPPER(execle)(const char *path, const char *arg, ...)
{
    va_list ap;
    LC_COLLECT_ARGS(arg, ap, argv, envp, 1);
    return lc_exec(LC_EXECVE, path, -1, argv, envp);
}

LC_API int monitor_real_execve(const char *path, char *const argv[], char *const envp[])
{
    lc_ensure_init();
    return REAL(execve)(path, argv, envp);
}

/* ---- spawn: a new process, followed like an exec'ed one --------------------------------- */
LC_API int LC_WRAPPER(posix_spawn)(pid_t *pid, const char *path,
                                   const posix_spawn_file_actions_t *actions,
                                   const posix_spawnattr_t *attr, char *const argv[],
                                   char *const envp[])
{
    lc_ensure_init();
    char **env = lc_follow_env(envp);
    int r = REAL(posix_spawn)(pid, path, actions, attr, argv, env);
    lc_follow_free(env, envp);
    return r;
}

LC_API int LC_WRAPPER(posix_spawnp)(pid_t *pid, const char *file,
                                    const posix_spawn_file_actions_t *actions,
                                    const posix_spawnattr_t *attr, char *const argv[],
                                    char *const envp[])
{
    lc_ensure_init();
    char **env = lc_follow_env(envp);
    int r = REAL(posix_spawnp)(pid, file, actions, attr, argv, env);
    lc_follow_free(env, envp);
    return r;
}

/* system() runs /bin/sh with the current environment: followed as long as
 * the application keeps LD_PRELOAD in it. */
LC_API int LC_WRAPPER(system)(const char *command)
{
    lc_ensure_init();
    lc_check_pid();
    return REAL(system)(command);
}

LC_API int monitor_real_system(const char *command)
{
    lc_ensure_init();
    return REAL(system)(command);
}
