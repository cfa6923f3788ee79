#define _GNU_SOURCE
/* execle/execvpe/fexecve with a clean environment: the new image must be
 * followed (hookit's environment put back) unless HOOKIT_FOLLOW=0. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 2) {
        printf("stage %s FOO=%s\n", argv[1], getenv("FOO") ? getenv("FOO") : "unset");
        fflush(stdout);
        char *env[] = { "FOO=2", NULL };
        if (!strcmp(argv[1], "execle")) {
            char *args[] = { argv[0], "execvpe", "x", NULL };
            execvpe("/proc/self/exe", args, env);
        } else if (!strcmp(argv[1], "execvpe")) {
            int fd = open("/proc/self/exe", O_RDONLY);
            char *args[] = { argv[0], "fexecve", "x", NULL };
            fexecve(fd, args, env);
        }
        return 0;
    }
    execle("/proc/self/exe", argv[0], "execle", "x", (char *)0, (char *[]){ "FOO=1", NULL });
    return 1;
}
