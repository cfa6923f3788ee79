/*
 * detached: eight detached threads still calling instrumented functions as
 * fast as they can when main returns (tests/core/test_threads.py).  The
 * process must end promptly with main's status, and the profile must hold
 * consistent trees for all nine threads, the spinners' counts exact up to
 * the call they were in.
 *
 *   thread 0: main -> main_work x1 (sleeps 20 ms)
 *   threads 1-8: spinner -> spin_mid (k-th call: k % 64 calls of spin_leaf)
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "progs.h"

volatile long sink;

KEEP void spin_leaf(int i) { sink += i; }

KEEP void spin_mid(int n)
{
    for (int i = 0; i < n; i++)
        spin_leaf(i);
}

KEEP void *spinner(void *arg)
{
    (void)arg;
    for (unsigned long k = 0;; k++)
        spin_mid((int)(k % 64));
    return NULL;
}

KEEP void main_work(void) { usleep(20000); }

int main(void)
{
    for (int i = 0; i < 8; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spinner, NULL);
        pthread_detach(t);
    }
    main_work();
    printf("detached: exiting\n");
    return 5;
}
