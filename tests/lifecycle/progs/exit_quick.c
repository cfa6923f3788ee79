#include <stdio.h>
#include <stdlib.h>
static void q(void) { printf("at_quick_exit handler\n"); fflush(stdout); }
static void a(void) { printf("atexit must not run\n"); }
int main(void) { at_quick_exit(q); atexit(a); quick_exit(12); }
