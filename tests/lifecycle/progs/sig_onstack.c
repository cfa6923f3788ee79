/* A stack overflow caught by a SIGSEGV handler on the alternate stack. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void on_segv(int s, siginfo_t *si, void *uc) {
    stack_t st; sigaltstack(0, &st);
    write(1, (st.ss_flags & SS_ONSTACK) ? "on alt stack\n" : "NOT on alt stack\n",
          (st.ss_flags & SS_ONSTACK) ? 13 : 17);
    _exit(7);
}
static int recurse(volatile char *prev) { volatile char buf[4096]; buf[0] = prev ? prev[0] + 1 : 0; return recurse(buf) + buf[100]; }
int main(void) {
    stack_t st; st.ss_sp = malloc(1 << 16); st.ss_size = 1 << 16; st.ss_flags = 0;
    sigaltstack(&st, 0);
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv; sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, 0);
    printf("overflowing\n"); fflush(stdout);
    return recurse(0);
}
