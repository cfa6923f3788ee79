#include <signal.h>
#include <stdio.h>
int main(void) { printf("raising\n"); fflush(stdout); raise(SIGSEGV); printf("survived?\n"); return 0; }
