/* Does nothing much: for the client's own calls (helper, abort, main). */
#include <stdio.h>
int main(void)
{
    printf("main ran\n");
    return 0;
}
