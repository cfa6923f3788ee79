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

#include <fcntl.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>

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

/* Will the exec fail for sure?  As libmonitor, the file (or, for a bare
 * name, some file on PATH) must be executable for us to end the image:
 * an exec that cannot start anything keeps every thread running.  Returns
 * the errno the exec would give, or 0 when it may succeed. */
static int lc_exec_hopeless(enum lc_exec_kind kind, const char *file)
{
    if (kind == LC_FEXECVE)
        return 0;
    if (!file)
        return EFAULT;
    if (!*file)
        return ENOENT;
    if (kind == LC_EXECVE || strchr(file, '/'))
        return faccessat(AT_FDCWD, file, X_OK, AT_EACCESS) == 0 ? 0 : errno;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";         /* glibc's default */
    size_t flen = strlen(file);
    int err = ENOENT;
    for (;;) {
        size_t l = strcspn(path, ":");
        char buf[4096];
        if (l + flen + 2 <= sizeof buf) {
            memcpy(buf, l ? path : ".", l ? l : 1);
            size_t o = l ? l : 1;
            buf[o++] = '/';
            memcpy(buf + o, file, flen + 1);
            if (faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS) == 0)
                return 0;
            if (errno == EACCES)
                err = EACCES;
        }
        if (!path[l])
            break;
        path += l + 1;
    }
    return err;
}

static int lc_exec(enum lc_exec_kind kind, const char *path, int fd, char *const argv[],
                   char *const envp[])
{
    lc_ensure_init();
    lc_check_pid();
    int saved_errno = errno;
    int hopeless = lc_exec_hopeless(kind, path);
    errno = saved_errno;
    char **env = lc_follow_env(envp);
    int ended = hopeless ? 0 : lc_end_for_exec();
    if (hopeless)
        lc_debug("exec of %s cannot succeed (errno %d): nothing ends", path, hopeless);
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

/* envp without LD_PRELOAD (malloc'ed, or NULL when out of memory). */
static char **lc_env_unmonitored(char *const envp[])
{
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++)
        n++;
    char **out = malloc((n + 1) * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (char *const *e = envp; e && *e; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11))
            out[k++] = *e;
    out[k] = NULL;
    return out;
}

/* As libmonitor: no fini_process, and the new program is not monitored
 * (LD_PRELOAD is left out of its environment). */
LC_API int monitor_real_execve(const char *path, char *const argv[], char *const envp[])
{
    lc_ensure_init();
    if (!path || !argv || !envp) {
        errno = EACCES;
        return -1;
    }
    char **env = lc_env_unmonitored(envp);
    int r = REAL(execve)(path, argv, env ? env : (char **)envp);
    int saved = errno;
    free(env);
    errno = saved;
    return r;
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

/* system() as libc does it (SIGINT and SIGQUIT ignored and SIGCHLD blocked
 * while the shell runs), spawning /bin/sh so that we know its pid: the
 * application's system() gives pre_fork / post_fork(pid) around it (as
 * libmonitor), and the shell starts with the current environment, so it is
 * followed as long as the application keeps LD_PRELOAD in it. */
static int lc_system(const char *command, char *const envp[], pid_t *child)
{
    *child = -1;
    if (!command)
        return access("/bin/sh", X_OK) == 0;
    struct sigaction ign, old_int, old_quit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    REAL(sigaction)(SIGINT, &ign, &old_int);
    REAL(sigaction)(SIGQUIT, &ign, &old_quit);
    REAL(pthread_sigmask)(SIG_BLOCK, &chld, &old_mask);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t dfl, child_mask = old_mask;
    sigemptyset(&dfl);
    if (old_int.sa_handler != SIG_IGN)
        sigaddset(&dfl, SIGINT);
    if (old_quit.sa_handler != SIG_IGN)
        sigaddset(&dfl, SIGQUIT);
    lc_signal_app_mask(&child_mask);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setsigmask(&attr, &child_mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    char *argv[] = { "sh", "-c", (char *)command, NULL };
    int status;
    pid_t pid;
    int rc = REAL(posix_spawn)(&pid, "/bin/sh", NULL, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) {
        *child = pid;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) {
                status = -1;
                break;
            }
    } else {
        status = 127 << 8;      /* what libc's system() gives */
    }
    int saved = errno;
    REAL(sigaction)(SIGINT, &old_int, NULL);
    REAL(sigaction)(SIGQUIT, &old_quit, NULL);
    REAL(pthread_sigmask)(SIG_SETMASK, &old_mask, NULL);
    errno = saved;
    return status;
}

LC_API int LC_WRAPPER(system)(const char *command)
{
    lc_ensure_init();
    lc_check_pid();
    if (!command)
        return REAL(system)(command);
    void *data = lc_pre_fork_callbacks();
    pid_t child;
    int status = lc_system(command, environ, &child);
    lc_post_fork_callbacks(child, data);
    return status;
}

/* As libmonitor: no callbacks, and the shell is not monitored. */
LC_API int monitor_real_system(const char *command)
{
    lc_ensure_init();
    char **env = lc_env_unmonitored(environ);
    pid_t child;
    int status = lc_system(command, env ? env : environ, &child);
    int saved = errno;
    free(env);
    errno = saved;
    return status;
}
