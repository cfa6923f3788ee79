/*
 * fmt_driver: the C++ workload of `make bench` (bench/benchlib/programs.py).
 * {fmt} (Debian's libfmt-dev, header-only with FMT_HEADER_ONLY) formats a
 * report of N rows: integers, floating point, strings, alignment, hex and
 * a joined vector per row.  The instrumented code is fmt's templates,
 * instantiated in this program, as in any application that uses it.
 *
 *   fmt_driver N
 *
 * prints, as bench/sqlite_driver.c does:
 *     ns=<wall ns> cpu_ns=<process CPU ns> checksum=<FNV-1a of the text>
 *     end_cpu_ns=<..> end_ns=<..>
 */
#define FMT_HEADER_ONLY
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t fnv(uint64_t h, const std::string &s)
{
    for (unsigned char c : s)
        h = (h ^ c) * 1099511628211ULL;
    return h;
}

static std::string row(int i, const std::string &tag, const std::vector<int> &v)
{
    return fmt::format("{:>6} | {:<8} | {:12.4f} | {:#010x} | {:e} | {}", i, tag, i * 1.37,
                       i * 2654435761u, i / 3.0, fmt::join(v, ","));
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 1000;
    std::vector<std::string> tags = {"alpha", "beta", "gamma", "delta"};
    std::vector<int> v = {1, 22, 333, 4444};
    uint64_t h = 1469598103934665603ULL;
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < n; i++) {
        v[i % 4] = (int)i;
        h = fnv(h, row((int)i, tags[i % 4], v));
        h = fnv(h, fmt::format("{}-{}-{}", i, tags[(i + 1) % 4], i % 7 == 0));
    }
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    std::printf("ns=%lld cpu_ns=%lld checksum=%016llx", t1 - t0, c1 - c0, (unsigned long long)h);
    std::printf(" end_cpu_ns=%lld", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    std::printf(" end_ns=%lld\n", now_ns(CLOCK_MONOTONIC));
    return 0;
}
