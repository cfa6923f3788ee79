/* Masks the application sets and reads back are its own. */
#include <signal.h>
#include <stdio.h>
int main(void) {
    sigset_t s, old; sigemptyset(&s); sigaddset(&s, SIGUSR1); sigaddset(&s, SIGRTMIN + 3);
    sigprocmask(SIG_BLOCK, &s, &old);
    sigset_t now; sigprocmask(SIG_BLOCK, 0, &now);
    printf("USR1=%d RTMIN+3=%d TERM=%d\n", sigismember(&now, SIGUSR1), sigismember(&now, SIGRTMIN + 3), sigismember(&now, SIGTERM));
    raise(SIGUSR1);
    sigset_t pend; sigpending(&pend);
    printf("USR1 pending=%d\n", sigismember(&pend, SIGUSR1));
    signal(SIGUSR1, SIG_IGN);
    sigprocmask(SIG_SETMASK, &old, 0);
    printf("unblocked, ignored: alive\n");
    return 0;
}
