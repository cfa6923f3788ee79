/* Anonymous executable memory at a known address, like a JIT's code: prints
 * "ADDR", then waits for stdin to close. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    void *p = mmap(NULL, 65536, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    printf("%lx\n", (unsigned long)p);
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
