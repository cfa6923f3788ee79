#include <stdio.h>
#include <stdlib.h>
static void second(void) { printf("second handler\n"); }
static void first(void) { printf("first handler calls exit(4)\n"); exit(4); }
int main(void) { atexit(second); atexit(first); printf("main\n"); exit(1); }
