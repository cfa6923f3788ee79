/* PATH unset: execvp falls back to libc's default path. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    unsetenv("PATH");
    printf("PATH unset\n"); fflush(stdout);
    char *args[] = { "echo", "found echo", NULL };
    execvp("echo", args);
    perror("execvp");
    return 3;
}
