#include <error.h>
#include <stdio.h>
int main(void) { printf("about to error\n"); fflush(stdout); error(5, 0, "bad thing %s", "here"); return 0; }
