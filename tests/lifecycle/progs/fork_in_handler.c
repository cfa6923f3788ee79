#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile pid_t child;
static void h(int s) { child = fork(); if (child == 0) { write(1, "child from handler\n", 19); _exit(2); } }
int main(void) {
    signal(SIGUSR1, h); raise(SIGUSR1);
    int st; waitpid(child, &st, 0);
    printf("status=%d\n", WEXITSTATUS(st));
    return 0;
}
