#include <stdio.h>
#include <stdlib.h>
long depth(long n) { return n == 0 ? 0 : 1 + depth(n - 1); }
int main(void) { printf("depth=%ld\n", depth(100000)); return 0; }
