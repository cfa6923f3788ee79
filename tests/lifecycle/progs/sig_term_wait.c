/* Waits for a SIGTERM from outside (the test sends it). */
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("ready\n"); fflush(stdout); for (;;) pause(); }
