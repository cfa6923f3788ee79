/*
 * fmt_loop: a formatting loop over fmt (Debian libfmt-dev, header-only with
 * FMT_HEADER_ONLY): template-heavy, instrumented C++.  The issue measured
 * 15.6% of the calls under a wrong parent from the second iteration on.
 * Reference: refstack (no exception is thrown).
 */
#define FMT_HEADER_ONLY
#include <fmt/format.h>
#include <cstdio>
#include <string>
#include <vector>

static std::string row(int i, double x, const std::string &tag)
{
    return fmt::format("{:>5} | {:<8} | {:10.3f} | {:#x} | {}", i, tag, x, i * 7, i % 2 == 0);
}

int main()
{
    std::vector<std::string> tags = {"alpha", "beta", "gamma"};
    size_t total = 0;
    for (int it = 0; it < 5; it++)
        for (int i = 0; i < 20; i++)
            total += row(i, i * 1.25 + it, tags[i % 3]).size() + fmt::format("{}-{}", it, i).size();
    std::printf("fmt_loop: %zu\n", total);
    return 0;
}
