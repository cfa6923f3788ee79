#include <stdio.h>
#include <stdlib.h>
int main(void) { printf("aborting\n"); fflush(stdout); abort(); }
