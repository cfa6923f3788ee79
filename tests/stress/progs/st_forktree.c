/* Stress: a fork tree.  The root forks A children, each forks B
 * grandchildren (A + A*B processes besides the root); every process does
 * some instrumented work and exits with a status its parent checks.
 *   st_forktree A B */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static int leaf(int x) { return (x * 7 + 3) % 101; }
__attribute__((noinline)) static int work(int x) { return leaf(x) + leaf(x + 1); }

/* Fork n children running child(i); 0 when all exited with their status. */
static int spawn(int n, int (*child)(int), int base)
{
    pid_t *pids = malloc(n * sizeof *pids);
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork");
            exit(3);
        }
        if (pids[i] == 0)
            exit(child(base + i));
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st)
            || WEXITSTATUS(st) != (base + i) % 50)
            bad++;
    }
    free(pids);
    return bad;
}

static int B;

static int grandchild(int i)
{
    work(i);
    return i % 50;
}

static int child(int i)
{
    work(i);
    if (spawn(B, grandchild, i * 1000) != 0)
        return 99;
    return i % 50;
}

int main(int argc, char **argv)
{
    int a = argc > 1 ? atoi(argv[1]) : 20;
    B = argc > 2 ? atoi(argv[2]) : 9;
    fflush(stdout);
    int bad = spawn(a, child, 0);
    printf("processes %d failed %d\n", a + a * B, bad);
    return bad ? 1 : 0;
}
