/* Failed execs (missing file, EACCES, bad interpreter) resume monitoring. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    char *args[] = { "x", NULL };
    extern char **environ;
    execv("/nonexistent/program", args);
    printf("missing: %s\n", strerror(errno));
    execve("/nonexistent/other", args, environ);
    printf("execve missing: %s\n", strerror(errno));
    int fd = open("noexec.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644); write(fd, "data\n", 5); close(fd);
    execv("./noexec.txt", args);
    printf("not executable: %s\n", strerror(errno));
    fd = open("badinterp.sh", O_CREAT | O_WRONLY | O_TRUNC, 0755); write(fd, "#!/nonexistent/interp\n", 22); close(fd);
    execl("./badinterp.sh", "badinterp.sh", (char *)0);
    printf("bad interpreter: %s\n", strerror(errno));
    execlp("no-such-command-anywhere", "x", (char *)0);
    printf("execlp: %s\n", strerror(errno));
    return 4;
}
