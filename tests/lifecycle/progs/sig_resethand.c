#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void h(int s) { write(1, "handler once\n", 13); }
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_handler = h; sa.sa_flags = SA_RESETHAND;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    struct sigaction now; sigaction(SIGUSR1, 0, &now);
    printf("after first: %s\n", now.sa_handler == SIG_DFL ? "SIG_DFL" : "handler"); fflush(stdout);
    raise(SIGUSR1);
    printf("still alive?\n");
    return 0;
}
