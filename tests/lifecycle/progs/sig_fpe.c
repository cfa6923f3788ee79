#include <stdio.h>
volatile int zero = 0;
int divide(int a) { return a / zero; }
int main(void) { printf("dividing\n"); fflush(stdout); return divide(7); }
