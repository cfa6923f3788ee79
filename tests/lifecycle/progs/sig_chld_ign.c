/* SIGCHLD=SIG_IGN: children are reaped by the kernel (wait gives ECHILD). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    signal(SIGCHLD, SIG_IGN);
    pid_t p = fork();
    if (p == 0) _exit(3);
    int st; pid_t r = wait(&st);
    printf("wait=%s errno=%s\n", r < 0 ? "-1" : "pid", r < 0 ? strerror(errno) : "-");
    return 0;
}
