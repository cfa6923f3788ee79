/* A new process made with the raw fork system call (no libc fork, no
 * pthread_atfork): the layer notices the new pid at the child's exit. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    fflush(stdout);
    long pid = syscall(SYS_fork);
    if (pid == 0) { printf("raw child\n"); exit(3); }
    int st; waitpid((pid_t)pid, &st, 0);
    printf("raw child status=%d\n", WEXITSTATUS(st));
    return 0;
}
