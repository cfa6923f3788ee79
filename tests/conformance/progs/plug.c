/* own_malloc's dlopen'ed instrumented library. */
#include <stdlib.h>
static int plug_step(int i) { char *p = malloc(32); p[0] = (char)i; int r = p[0]; free(p); return r; }
int plug_work(int n) { int s = 0; for (int i = 0; i < n; i++) s += plug_step(i); return s; }
