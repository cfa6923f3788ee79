#include <assert.h>
#include <stdio.h>
int check(int x) { assert(x == 2); return x; }
int main(void) { printf("asserting\n"); fflush(stdout); return check(3); }
