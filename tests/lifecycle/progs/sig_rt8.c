/* The application's own use of SIGRTMIN+8 (the layer's shootdown signal):
 * its handler, its view, sigqueue values, and SIG_IGN all still work. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static volatile int hits, value;
static void h(int s, siginfo_t *si, void *uc) { hits++; value = si->si_value.sival_int; }
int main(void) {
    int sig = SIGRTMIN + 8;
    struct sigaction sa, q; memset(&sa, 0, sizeof sa);
    sigaction(sig, 0, &q);
    printf("initial: %s\n", q.sa_handler == SIG_DFL ? "dfl" : "other");
    sa.sa_sigaction = h; sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, 0);
    raise(sig);
    union sigval v = { .sival_int = 77 };
    sigqueue(getpid(), sig, v);
    sigaction(sig, 0, &q);
    printf("hits=%d value=%d view=%s\n", hits, value, q.sa_sigaction == h ? "h" : "other");
    signal(sig, SIG_IGN); raise(sig);
    printf("ignored, hits=%d\n", hits);
    signal(sig, SIG_DFL);
    raise(sig);
    printf("not reached\n");
    return 0;
}
