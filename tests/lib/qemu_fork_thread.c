/* Probe for a qemu-user bug (make check-arm64, docs/testing.md): under
 * qemu-user 7.2, a thread created in the fork child of a process that has
 * more than one thread aborts qemu with "qemu_plugin_vcpu_init_hook:
 * assertion failed".  No hookit here: exit 0 means this qemu does not
 * have the bug.  libjprof's control thread makes every profiled process
 * such a parent, and starts a thread in every child. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;

static void *wait_for_stop(void *arg)
{
    while (!stop)
        usleep(1000);
    return arg;
}

static void *do_nothing(void *arg)
{
    return arg;
}

static int child_creates_a_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, do_nothing, NULL) != 0)
        return 1;
    return pthread_join(t, NULL) != 0;
}

int main(void)
{
    pthread_t t;
    int status = 0;
    if (pthread_create(&t, NULL, wait_for_stop, NULL) != 0)
        return 2;
    pid_t pid = fork();
    if (pid == 0)
        _exit(child_creates_a_thread());
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        status = -1;
    stop = 1;
    pthread_join(t, NULL);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
