/*
 * A change of user (a server's workers dropping root for nobody): before
 * the effective user changes, libhookit is told while the process still
 * has its rights, so that files it made as the old user (the profiler's
 * registry entry) can be put where the new user may remove them at the
 * end.  The calls themselves are libc's, unchanged (glibc applies them to
 * every thread).  setgid and its family need nothing: the registry's
 * directories admit their owner only, whatever the group.
 */
#include "lifecycle/internal.h"

#include <unistd.h>

static void lc_user_changes(uid_t euid)
{
    lc_ensure_init();
    if (euid == (uid_t)-1 || euid == geteuid())
        return;
    int saved = errno;
    LC_CLIENTS(pre_set_user, euid);
    errno = saved;
}

/* setuid by a privileged process sets every user id; otherwise only the
 * effective one: either way the effective user becomes uid. */
LC_API int LC_WRAPPER(setuid)(uid_t uid)
{
    lc_user_changes(uid);
    return REAL(setuid)(uid);
}

LC_API int LC_WRAPPER(seteuid)(uid_t euid)
{
    lc_user_changes(euid);
    return REAL(seteuid)(euid);
}

LC_API int LC_WRAPPER(setreuid)(uid_t ruid, uid_t euid)
{
    lc_user_changes(euid);
    return REAL(setreuid)(ruid, euid);
}

LC_API int LC_WRAPPER(setresuid)(uid_t ruid, uid_t euid, uid_t suid)
{
    lc_user_changes(euid);
    return REAL(setresuid)(ruid, euid, suid);
}
