/* SA_SIGINFO: same siginfo and a usable ucontext. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
static volatile int code, val, got_uc, pid_ok;
static void h(int s, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    code = si->si_code; val = si->si_value.sival_int; pid_ok = si->si_pid == getpid();
    got_uc = uc != NULL && uc->uc_mcontext.gregs[REG_RSP] != 0;
}
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, 0);
    union sigval v = { .sival_int = 4242 };
    sigqueue(getpid(), SIGUSR2, v);
    printf("code=%s val=%d pid_ok=%d uc=%d\n", code == SI_QUEUE ? "SI_QUEUE" : "other", val, pid_ok, got_uc);
    return 0;
}
