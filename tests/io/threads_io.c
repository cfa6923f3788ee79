/* Two threads write to one file (10 x 100 bytes each, with pwrite at
 * disjoint offsets), then a forked child writes 50 bytes to another file.
 * Prints "parent done" (the child prints nothing). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd;

void *worker(void *arg)
{
    long k = (long)arg;
    char buf[100];
    memset(buf, 'a' + (int)k, sizeof buf);
    for (int j = 0; j < 10; j++)
        if (pwrite(fd, buf, 100, k * 1000 + j * 100) != 100)
            return (void *)1;
    return NULL;
}

void child_io(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/child.dat", dir);
    int c = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (write(c, "0123456789012345678901234567890123456789012345678", 50) != 50)
        _exit(1);
    close(c);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096];
    snprintf(path, sizeof path, "%s/shared.dat", dir);
    fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    pthread_t t[2];
    for (long k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    for (int k = 0; k < 2; k++)
        pthread_join(t[k], NULL);
    close(fd);
    pid_t pid = fork();
    if (pid == 0) {
        child_io(dir);
        return 0;
    }
    int st;
    waitpid(pid, &st, 0);
    printf("parent done %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
