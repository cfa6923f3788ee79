#include <stdio.h>
#include <unistd.h>
int main(void) { printf("before exec\n"); fflush(stdout); execl("/bin/echo", "echo", "echo ran", (char *)0); perror("execl"); return 1; }
