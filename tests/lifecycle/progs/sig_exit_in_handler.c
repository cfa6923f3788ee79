#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void h(int s) { write(1, "handler exits\n", 14); _exit(5); }
int main(void) { signal(SIGUSR1, h); raise(SIGUSR1); printf("not reached\n"); return 0; }
