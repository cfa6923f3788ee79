/* A library whose constructor does something before main, chosen by CTOR_DO. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void *work(void *a) { return a; }
__attribute__((constructor)) static void before_main(void) {
    const char *what = getenv("CTOR_DO");
    if (!what) return;
    if (!strcmp(what, "thread")) {
        pthread_t t; pthread_create(&t, 0, work, 0); pthread_join(t, 0);
        write(1, "ctor thread joined\n", 19);
    } else if (!strcmp(what, "fork")) {
        pid_t p = fork();
        if (p == 0) { write(1, "ctor child\n", 11); _exit(0); }
        waitpid(p, 0, 0);
        write(1, "ctor forked\n", 12);
    } else if (!strcmp(what, "dlopen")) {
        void *h = dlopen("libm.so.6", RTLD_NOW);
        write(1, h ? "ctor dlopen ok\n" : "ctor dlopen failed\n", h ? 15 : 19);
    } else if (!strcmp(what, "exit")) {
        write(1, "ctor exits\n", 11);
        exit(8);
    }
}
int ctor_lib_marker(void) { return 1; }
