/* Compiled WITHOUT -finstrument-functions: a frame hookit cannot see,
 * between an instrumented caller and an instrumented callback that throws. */
#include <algorithm>
void plain_sort(int *b, int *e, bool (*less)(int, int)) { std::sort(b, e, less); }
