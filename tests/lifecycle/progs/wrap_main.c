/* Defines libmonitor's static hook: called just before main in a build
 * linked with `hookit link` (ld --wrap=main). */
#include <stdio.h>
int monitor_wrap_main(int argc, char **argv, char **envp)
{
    printf("wrap_main argc=%d\n", argc);
    return 0;
}
int main(void)
{
    printf("main\n");
    return 0;
}
