/* dlopen of a library that pulls another one in as a dependency. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    int (*f)(int) = (int (*)(int))dlsym(h, "dep_value");
    printf("dep_value=%d\n", f(5));
    dlclose(h);
    return 0;
}
