#define _GNU_SOURCE
/* What sigaction reports back: the application's own view. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
static void h(int s) {}
static void show(int s, const char *n) {
    struct sigaction a; sigaction(s, 0, &a);
    printf("%s: %s restart=%d siginfo=%d resethand=%d nodefer=%d mask_self=%d\n", n,
           a.sa_handler == SIG_IGN ? "ign" : a.sa_handler == SIG_DFL ? "dfl" : a.sa_handler == h ? "h" : "other",
           !!(a.sa_flags & SA_RESTART), !!(a.sa_flags & SA_SIGINFO), !!(a.sa_flags & SA_RESETHAND),
           !!(a.sa_flags & SA_NODEFER), sigismember(&a.sa_mask, s));
}
int main(void) {
    show(SIGSEGV, "SEGV initial"); show(SIGTERM, "TERM initial"); show(SIGCHLD, "CHLD initial");
    signal(SIGTERM, h); show(SIGTERM, "TERM signal()");
    sysv_signal(SIGHUP, h); show(SIGHUP, "HUP sysv_signal()");
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = h; sa.sa_flags = SA_NODEFER | SA_RESTART;
    sigaddset(&sa.sa_mask, SIGINT);
    struct sigaction old; sigaction(SIGINT, &sa, &old);
    printf("old INT: %s\n", old.sa_handler == SIG_DFL ? "dfl" : "other");
    show(SIGINT, "INT sigaction()");
    signal(SIGINT, SIG_DFL); show(SIGINT, "INT back to dfl");
    signal(SIGPIPE, SIG_IGN); show(SIGPIPE, "PIPE ign");
    printf("signal(SIGKILL)=%s\n", signal(SIGKILL, h) == SIG_ERR ? "SIG_ERR" : "ok");
    return 0;
}
