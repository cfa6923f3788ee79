/*
 * exceptions: C++ exceptions caught at several depths, rethrown, and thrown
 * through frames that are not instrumented: libc's qsort with a throwing
 * comparator, and std::sort instantiated in a separately compiled,
 * uninstrumented object (uninst_sort.cc).  g++ runs exit hooks while
 * unwinding, clang++ does not.  Expected tree: cases.py.
 *
 *   main
 *     catch_at x5 (k = 0..4)   > thrower (k+1 levels) ;  > handled x5
 *     outer_catch x2 > rethrower x2 > thrower (3 levels) ; > note x2
 *                    > handled x2
 *     sort_throw x1 > cmp_throw x5 (through qsort; the 5th throws) ; > handled
 *     stdsort_throw x1 > less_throw x7 (through std::sort; the 7th throws) ;
 *                      > handled
 *     no_throw x3 > thrower_safe x3
 */
#include <cstdio>
#include <cstdlib>

struct Err { int at; };
static volatile long sink;
static int ncmp, nless;

void plain_sort(int *b, int *e, bool (*less)(int, int));   // uninst_sort.cc

static void thrower(int n)
{
    if (n == 0)
        throw Err{n};
    thrower(n - 1);
    sink++;
}

static void handled() { sink++; }
static void note() { sink++; }

static void catch_at(int k)
{
    try {
        thrower(k);
    } catch (Err &) {
        handled();
    }
}

static void rethrower(int k)
{
    try {
        thrower(k);
    } catch (...) {
        note();
        throw;
    }
}

static void outer_catch()
{
    try {
        rethrower(2);
    } catch (Err &) {
        handled();
    }
}

static int vals[16] = {9, 3, 14, 1, 7, 12, 5, 0, 11, 2, 15, 6, 10, 4, 13, 8};

static int cmp_throw(const void *a, const void *b)
{
    if (++ncmp == 5)
        throw Err{5};
    return *(const int *)a - *(const int *)b;
}

static void sort_throw()
{
    int v[16];
    for (int i = 0; i < 16; i++)
        v[i] = vals[i];
    try {
        qsort(v, 16, sizeof v[0], cmp_throw);
    } catch (Err &) {
        handled();
    }
}

static bool less_throw(int a, int b)
{
    if (++nless == 7)
        throw Err{7};
    return a < b;
}

static void stdsort_throw()
{
    int v[16];
    for (int i = 0; i < 16; i++)
        v[i] = vals[i];
    try {
        plain_sort(v, v + 16, less_throw);
    } catch (Err &) {
        handled();
    }
}

static int thrower_safe(int n) { return n + 1; }
static void no_throw(int i) { sink += thrower_safe(i); }

int main()
{
    for (int k = 0; k < 5; k++)
        catch_at(k);
    for (int i = 0; i < 2; i++)
        outer_catch();
    sort_throw();
    stdsort_throw();
    for (int i = 0; i < 3; i++)
        no_throw(i);
    std::printf("exceptions: %ld %d %d\n", (long)sink, ncmp, nless);
    return 0;
}
