#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    fflush(stdout);
    pid_t p = vfork();
    if (p == 0) { execl("/bin/echo", "echo", "from vfork child", (char *)0); _exit(127); }
    int st; waitpid(p, &st, 0);
    printf("vfork child status=%d\n", WEXITSTATUS(st));
    return 0;
}
