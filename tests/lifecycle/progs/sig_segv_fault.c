#include <stdio.h>
volatile int *null_ptr;
int poke(void) { return *null_ptr; }
int main(void) { printf("faulting\n"); fflush(stdout); return poke(); }
