// Stress: a C++ exception thrown through DEPTH instrumented frames and
// caught, REPEAT times, then a call after.   st_throw DEPTH REPEAT
#include <cstdio>
#include <cstdlib>
#include <pthread.h>

struct Boom {
    long at;
};

__attribute__((noinline)) static long dive(long n)
{
    if (n == 0)
        throw Boom{ n };
    return dive(n - 1) + 1;
}

__attribute__((noinline)) static long after(long x) { return x + 1; }

static long depth, repeat;

static void *run(void *)
{
    long caught = 0;
    for (long i = 0; i < repeat; i++) {
        try {
            dive(depth - 1);
        } catch (const Boom &b) {
            caught += 1 + b.at;
        }
    }
    return (void *)after(caught);
}

int main(int argc, char **argv)
{
    depth = argc > 1 ? atol(argv[1]) : 100000;
    repeat = argc > 2 ? atol(argv[2]) : 10;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)depth * 512 + (1 << 20));
    pthread_t t;
    void *r;
    pthread_create(&t, &attr, run, nullptr);
    pthread_join(t, &r);
    std::printf("depth %ld repeat %ld caught %ld\n", depth, repeat, (long)r - 1);
    return 0;
}
