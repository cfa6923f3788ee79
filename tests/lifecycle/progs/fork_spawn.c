/* posix_spawn of ourselves with an environment lacking LD_PRELOAD/HOOKIT_*:
 * the child must still be followed (its callbacks appear in the log). */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1) { printf("spawned child %s\n", argv[1]); return 5; }
    char *args[] = { argv[0], "one", NULL };
    char *env[] = { "FOO=bar", NULL };
    pid_t p; fflush(stdout);
    int r = posix_spawn(&p, "/proc/self/exe", 0, 0, args, env);
    int st; waitpid(p, &st, 0);
    char *args2[] = { "fork_spawn", "two", NULL };
    r |= posix_spawnp(&p, "/bin/true", 0, 0, args2, env);
    waitpid(p, 0, 0);
    printf("spawn r=%d child exit=%d\n", r, WEXITSTATUS(st));
    return 0;
}
