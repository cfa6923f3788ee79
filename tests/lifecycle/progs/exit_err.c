#include <err.h>
#include <stdio.h>
int main(void) { printf("about to err\n"); fflush(stdout); errx(2, "something failed: %d", 42); }
