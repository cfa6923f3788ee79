#include <stdio.h>
int compute(int n) { return n <= 1 ? 1 : n * compute(n - 1); }
int main(int argc, char **argv) { printf("fact=%d argc=%d\n", compute(5), argc); return 7; }
