/* A default-ignored signal (SIGWINCH, SIGCHLD) must not interrupt a read. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    int fds[2]; pipe(fds);
    pid_t parent = getpid();
    pid_t c = fork();
    if (c == 0) { usleep(100000); kill(parent, SIGWINCH); usleep(100000); kill(parent, SIGURG);
                  usleep(100000); write(fds[1], "y", 1); _exit(0); }
    close(fds[1]);
    char ch; ssize_t n = read(fds[0], &ch, 1);
    printf("read=%zd %s\n", n, n < 0 ? strerror(errno) : "ok");
    waitpid(c, 0, 0);
    return 0;
}
