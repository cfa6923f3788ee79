/*
 * recursion: self and mutual recursion that GCC inlines into itself at -O2
 * and -O3 (every inlined copy is instrumented and passes the host's return
 * address).  Reference: refstack (entries and exits pair).
 */
#include <stdio.h>

static int rec(int n) { return n <= 0 ? 0 : 1 + rec(n - 1); }

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static long ackermann(long m, long n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

static void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }

static int partition(int *v, int lo, int hi)
{
    int p = v[hi], i = lo;
    for (int j = lo; j < hi; j++)
        if (v[j] < p)
            swap(&v[i++], &v[j]);
    swap(&v[i], &v[hi]);
    return i;
}

static void quicksort(int *v, int lo, int hi)
{
    if (lo >= hi)
        return;
    int p = partition(v, lo, hi);
    quicksort(v, lo, p - 1);
    quicksort(v, p + 1, hi);
}

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void)
{
    int v[64];
    unsigned x = 12345;
    for (int i = 0; i < 64; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (int)(x >> 16) % 1000;
    }
    quicksort(v, 0, 63);
    long r = rec(10) + fib(15) + ackermann(2, 3) + is_even(25) + is_odd(30) + v[0] + v[63];
    printf("recursion: %ld\n", r);
    return 0;
}
