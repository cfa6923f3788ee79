#include <stdio.h>
#include <unistd.h>
int main(void) { printf("buffered, never flushed\n"); write(1, "direct\n", 7); _exit(9); }
