#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
int main(void) {
    fflush(stdout);
    int st = system("echo from system; exit 3");
    printf("system status=%d\n", WEXITSTATUS(st));
    return 0;
}
