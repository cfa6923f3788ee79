/* dlopen by bare name, found through the program's RUNPATH. */
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
    void *h = dlopen("libdlrun.so", RTLD_NOW);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    int (*f)(int) = (int (*)(int))dlsym(h, "lib_value");
    printf("via runpath: %d\n", f(2));
    return 0;
}
