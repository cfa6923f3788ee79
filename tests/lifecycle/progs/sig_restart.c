/* SA_RESTART semantics: without it an alarm interrupts read (EINTR);
 * with it the read resumes. siginterrupt() switches it too. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int alarms;
static void on_alarm(int s) { alarms++; }
static void try_read(const char *what, int flags) {
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; sa.sa_flags = flags;
    sigaction(SIGALRM, &sa, 0);
    int fds[2]; pipe(fds);
    pid_t writer = fork();
    if (writer == 0) { close(fds[0]); usleep(600000); write(fds[1], "x", 1); _exit(0); }
    close(fds[1]);
    struct itimerval it = { {0, 0}, {0, 50000} };
    setitimer(ITIMER_REAL, &it, 0);
    char c; ssize_t n = read(fds[0], &c, 1);
    printf("%s: read=%zd errno=%s alarms=%d\n", what, n, n < 0 ? strerror(errno) : "-", alarms);
    close(fds[0]); waitpid(writer, 0, 0); alarms = 0;
}
int main(void) {
    try_read("no SA_RESTART", 0);
    try_read("SA_RESTART", SA_RESTART);
    signal(SIGALRM, on_alarm);
    siginterrupt(SIGALRM, 1);
    struct sigaction q; sigaction(SIGALRM, 0, &q);
    printf("after siginterrupt(1): restart=%d\n", !!(q.sa_flags & SA_RESTART));
    return 0;
}
