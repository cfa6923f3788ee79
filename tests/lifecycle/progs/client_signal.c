/* The client's monitor_sigaction handler sees SIGUSR1 before the application. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile int app_saw;
static void h(int s) { app_saw++; }
int main(void) {
    signal(SIGUSR1, h);
    raise(SIGUSR1);
    printf("application handler ran %d time(s)\n", app_saw);
    struct sigaction q; sigaction(SIGUSR1, 0, &q);
    printf("view: %s\n", q.sa_handler == h ? "h" : "other");
    return 0;
}
