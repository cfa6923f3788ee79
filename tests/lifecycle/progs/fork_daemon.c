/* daemon(): the parent leaves with _exit inside libc. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    printf("before daemon\n"); fflush(stdout);
    if (daemon(1, 1) < 0) { perror("daemon"); return 1; }
    printf("daemon child pid differs\n"); fflush(stdout);
    return 0;
}
