/* Colour and the pager for hookit report.  Colour only ever goes to a
 * terminal unless asked for; the pager is git's: only on a terminal, the
 * user's choice of program, `less -FRX` by default (quits at once when the
 * text fits the screen, keeps colours, leaves the text on the screen). */
#include "tools/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *style_bold(const struct report_opts *o) { return o->color ? "\033[1m" : ""; }
const char *style_dim(const struct report_opts *o) { return o->color ? "\033[2m" : ""; }
const char *style_reset(const struct report_opts *o) { return o->color ? "\033[0m" : ""; }

const char *style_heat(const struct report_opts *o, double pct)
{
    if (!o->color)
        return "";
    if (pct >= 20.0)
        return "\033[31m";
    if (pct >= 5.0)
        return "\033[33m";
    return "";
}

int style_want_color(int forced)
{
    if (forced >= 0)
        return forced;
    const char *no = getenv("NO_COLOR");
    if (no && *no)
        return 0;
    return isatty(STDOUT_FILENO);
}

static pid_t pager_pid = -1;

void pager_start(int enabled)
{
    if (!enabled || !isatty(STDOUT_FILENO))
        return;
    const char *cmd = getenv("HOOKIT_PAGER");
    if (!cmd)
        cmd = getenv("PAGER");
    if (!cmd)
        cmd = "less -FRX";
    if (!*cmd || !strcmp(cmd, "cat"))
        return;
    int fd[2];
    if (pipe(fd) != 0)
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        dup2(fd[0], STDIN_FILENO);
        close(fd[0]);
        close(fd[1]);
        setenv("LESS", "FRX", 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    pager_pid = pid;
}

void pager_end(void)
{
    if (pager_pid < 0)
        return;
    fflush(stdout);
    close(STDOUT_FILENO);       /* the pager sees the end of its input */
    int status;
    while (waitpid(pager_pid, &status, 0) < 0 && errno == EINTR)
        ;
    pager_pid = -1;
}
