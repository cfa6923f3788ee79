/* A SIGSEGV handler that recovers with siglongjmp, three times. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
static sigjmp_buf env;
static void h(int s) { siglongjmp(env, 1); }
volatile int *bad;
static int deep(int n) { return n ? deep(n - 1) + 1 : *bad; }
int main(void) {
    signal(SIGSEGV, h);
    int recovered = 0;
    for (int i = 0; i < 3; i++)
        if (sigsetjmp(env, 1) == 0) deep(10); else recovered++;
    printf("recovered %d times\n", recovered);
    return 0;
}
