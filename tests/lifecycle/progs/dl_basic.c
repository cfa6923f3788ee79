#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    int (*f)(int) = (int (*)(int))dlsym(h, "lib_value");
    printf("lib_value=%d\n", f(14));
    printf("dlclose=%d\n", dlclose(h));
    void *bad = dlopen("libdoes-not-exist.so", RTLD_NOW);
    printf("missing: %s\n", bad ? "loaded?" : "NULL");
    return 0;
}
