#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("terminating\n"); fflush(stdout); kill(getpid(), SIGTERM); pause(); return 0; }
