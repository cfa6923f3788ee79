/*
 * primes: hookit's demo program.  `make demo` builds it with
 * -finstrument-functions -lhookit, runs `primes 20000` and prints the call
 * tree hookit recorded.
 *
 * It counts the primes below N three ways: trial division of each n by every
 * d up to n/2, trial division up to the square root, and a sieve; then the
 * primes whose digit sum is prime too.  The profile shows:
 *   - where the time goes: the naive test makes one call to divides() per
 *     candidate divisor, millions of them; stopping at the square root
 *     needs a few hundred thousand; the sieve one cross_out() per prime;
 *   - the same function in two contexts: divides() under is_prime_naive
 *     and under is_prime_sqrt are separate nodes with their own counts;
 *   - calls through a function pointer: count_primes(limit, test);
 *   - exact call counts: each test is called N-2 times;
 *   - recursion: digit_sum() calls itself once per decimal digit, so its
 *     node repeats to the depth of the longest number (5 for 20000).
 *
 * Usage: primes [N]      (default 20000)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* noinline: keep each step its own function, so the tree shows it. */
#define STEP __attribute__((noinline))

STEP static bool divides(int d, int n)
{
    return n % d == 0;
}

/* Trial division by every d up to n/2: simple and slow. */
STEP static bool is_prime_naive(int n)
{
    if (n < 2)
        return false;
    for (int d = 2; d <= n / 2; d++)
        if (divides(d, n))
            return false;
    return true;
}

/* A divisor above the square root pairs with one below it: stop there. */
STEP static bool is_prime_sqrt(int n)
{
    if (n < 2)
        return false;
    for (int d = 2; d * d <= n; d++)
        if (divides(d, n))
            return false;
    return true;
}

STEP static int count_primes(int limit, bool (*is_prime)(int))
{
    int count = 0;
    for (int n = 2; n < limit; n++)
        count += is_prime(n);
    return count;
}

/* Sieve of Eratosthenes: composite[i] is set for every multiple of a prime. */
STEP static void cross_out(bool *composite, int p, int limit)
{
    for (long m = (long)p * p; m < limit; m += p)
        composite[m] = true;
}

STEP static bool *sieve(int limit)
{
    bool *composite = calloc(limit + 1, sizeof *composite);
    if (!composite) {
        perror("primes");
        exit(1);
    }
    for (int p = 2; (long)p * p < limit; p++)
        if (!composite[p])
            cross_out(composite, p, limit);
    return composite;
}

STEP static int count_by_sieve(const bool *composite, int limit)
{
    int count = 0;
    for (int n = 2; n < limit; n++)
        count += !composite[n];
    return count;
}

/* Recursive on purpose: one call per decimal digit. */
STEP static int digit_sum(int n)
{
    return n < 10 ? n : n % 10 + digit_sum(n / 10);
}

/* Primes (from the sieve) whose digit sum is prime as well. */
STEP static int count_digit_sum_primes(const bool *composite, int limit)
{
    int count = 0;
    for (int n = 2; n < limit; n++)
        if (!composite[n] && is_prime_sqrt(digit_sum(n)))
            count++;
    return count;
}

int main(int argc, char **argv)
{
    int limit = argc > 1 ? atoi(argv[1]) : 20000;
    if (limit < 2) {
        fprintf(stderr, "usage: primes [N]   (N >= 2)\n");
        return 2;
    }
    int naive = count_primes(limit, is_prime_naive);
    int by_sqrt = count_primes(limit, is_prime_sqrt);
    bool *composite = sieve(limit);
    int by_sieve = count_by_sieve(composite, limit);
    int special = count_digit_sum_primes(composite, limit);
    free(composite);
    printf("primes below %d: %d (naive) = %d (square root) = %d (sieve); "
           "%d have a prime digit sum\n", limit, naive, by_sqrt, by_sieve, special);
    return naive == by_sqrt && by_sqrt == by_sieve ? 0 : 1;
}
