/* SIG_IGN survives exec; a handler becomes SIG_DFL. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void h(int s) {}
static const char *name(int s) { struct sigaction a; sigaction(s, 0, &a);
    return a.sa_handler == SIG_IGN ? "ign" : a.sa_handler == SIG_DFL ? "dfl" : "handler"; }
int main(int argc, char **argv) {
    if (argc > 1) { printf("after exec: USR1=%s USR2=%s TERM=%s\n", name(SIGUSR1), name(SIGUSR2), name(SIGTERM)); return 0; }
    signal(SIGUSR1, SIG_IGN); signal(SIGUSR2, h);
    printf("before exec: USR1=%s USR2=%s\n", name(SIGUSR1), name(SIGUSR2)); fflush(stdout);
    execl("/proc/self/exe", argv[0], "child", (char *)0);
    return 1;
}
