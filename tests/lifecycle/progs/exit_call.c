#include <stdio.h>
#include <stdlib.h>
static void leave(int code) { printf("leaving %d\n", code); exit(code); }
int main(void) { leave(3); return 0; }
