#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void never(void) { printf("atexit ran\n"); }
int main(void) { atexit(never); write(1, "before\n", 7); _Exit(11); }
