#include <stdio.h>
#include <string.h>
int main(void) {
    FILE *f = popen("echo piped line", "r");
    char buf[100] = ""; fgets(buf, sizeof buf, f);
    int st = pclose(f);
    printf("got: %s status=%d\n", strtok(buf, "\n"), st);
    return 0;
}
