/* For the growing-log test: 40 writes of 10 bytes to DIR/slow.dat, 25 ms
 * apart (about one second), then "done". */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/slow.dat", argc > 1 ? argv[1] : ".");
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        return 1;
    struct timespec nap = { 0, 25000000 };
    for (int i = 0; i < 40; i++) {
        if (write(fd, "0123456789", 10) != 10)
            return 1;
        nanosleep(&nap, NULL);
    }
    close(fd);
    printf("done\n");
    return 0;
}
