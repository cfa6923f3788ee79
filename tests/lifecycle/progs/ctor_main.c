#include <stdio.h>
extern int ctor_lib_marker(void);
int main(void) { printf("main runs %d\n", ctor_lib_marker()); return 0; }
