#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) { printf("child\n"); return 3; }
    int st; waitpid(p, &st, 0);
    printf("parent: child exit=%d\n", WEXITSTATUS(st));
    return 0;
}
