/* dlopen and dlclose as told on stdin, one command a line, "ok" after each:
 *   loop LIB N   N times: dlopen LIB, call its function, dlclose it
 *   keep LIB     dlopen LIB, call its function, keep it loaded
 * At the end of stdin it waits to be killed (`hookit recover` then names
 * what it called from its saved maps copy).  The libraries are
 * tests/progs/dep_inner.c, built with their function named FN. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile long sink;

/* The one function each library exports (inner_fn or other_fn). */
static long call_lib(void *h)
{
    long (*fn)(long) = (long (*)(long))dlsym(h, "inner_fn");
    if (!fn)
        fn = (long (*)(long))dlsym(h, "other_fn");
    return fn ? fn(2) : -1;
}

static int open_call(const char *lib, int keep)
{
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    sink += call_lib(h);
    return keep ? 0 : dlclose(h);
}

int main(void)
{
    char line[4200], lib[4096];
    int n;
    while (fgets(line, sizeof line, stdin)) {
        int rc = -1;
        if (sscanf(line, "loop %4095s %d", lib, &n) == 2)
            for (rc = 0; n-- > 0 && rc == 0;)
                rc = open_call(lib, 0);
        else if (sscanf(line, "keep %4095s", lib) == 1)
            rc = open_call(lib, 1);
        printf("%s\n", rc == 0 ? "ok" : "failed");
        fflush(stdout);
    }
    for (;;)
        pause();
}
