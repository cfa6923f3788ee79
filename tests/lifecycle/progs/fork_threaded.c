/* fork from a worker thread while other threads run. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static void *spin(void *a) { for (;;) usleep(1000); }
static void *forker(void *a) {
    pid_t p = fork();
    if (p == 0) { printf("child of thread\n"); fflush(stdout); _exit(0); }
    int st; waitpid(p, &st, 0);
    printf("child status=%d\n", WEXITSTATUS(st)); fflush(stdout);
    return 0;
}
int main(void) {
    pthread_t s, f; pthread_create(&s, 0, spin, 0); pthread_create(&f, 0, forker, 0);
    pthread_join(f, 0);
    return 0;
}
