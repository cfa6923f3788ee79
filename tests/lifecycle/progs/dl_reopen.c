/* dlclose a library whose functions ran, then open another one (likely at the same address). */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW);
        if (!h) { printf("dlopen failed\n"); return 1; }
        int (*f)(int) = (int (*)(int))dlsym(h, i == 1 ? "lib_value" : "dep_value");
        printf("value %d = %d\n", i, f(i));
        dlclose(h);
    }
    return 0;
}
