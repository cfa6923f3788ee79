/* For the static link test: 3 x 100 bytes written with write(), read back
 * with one fread of 300, a malloc(123) freed.  Prints "ok". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile keep;

int main(int argc, char **argv)
{
    char path[4096], buf[300];
    snprintf(path, sizeof path, "%s/static.dat", argc > 1 ? argv[1] : ".");
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    memset(buf, 'z', sizeof buf);
    for (int i = 0; i < 3; i++)
        if (write(fd, buf, 100) != 100)
            return 1;
    close(fd);
    FILE *f = fopen(path, "r");
    if (!f || fread(buf, 1, 300, f) != 300)
        return 1;
    fclose(f);
    keep = malloc(123);
    free(keep);
    printf("ok\n");
    return 0;
}
