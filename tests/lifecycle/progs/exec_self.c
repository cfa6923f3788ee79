/* execv of ourselves: the new image is monitored too. */
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc > 1) { printf("second image\n"); return 2; }
    printf("first image\n"); fflush(stdout);
    char *args[] = { argv[0], "again", NULL };
    execv("/proc/self/exe", args);
    return 1;
}
