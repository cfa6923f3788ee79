// C++ test program for A2N: namespaces, templates, overloads, a static
// member, an anonymous namespace.  Prints "KEY ADDRESS" lines, where KEY is
// the exact demangled name expected, then "ready", then waits for stdin.
#include <cstdio>
#include <cstring>

namespace ns {
template <typename T> struct Widget {
    T v;
    __attribute__((noinline)) T get(int k) const { return v + k; }
    __attribute__((noinline)) static Widget make(T x) { return Widget{x}; }
};

__attribute__((noinline)) int over(int x) { return x + 1; }
__attribute__((noinline)) double over(double x) { return x * 2; }
__attribute__((noinline)) int over(const char *s, unsigned n) { return (int)std::strlen(s) + (int)n; }
}  // namespace ns

namespace {
__attribute__((noinline)) int hidden(int x) { return x - 1; }
}

template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }

int main(int argc, char **argv)
{
    int (ns::Widget<int>::*get_int)(int) const = &ns::Widget<int>::get;
    long (ns::Widget<long>::*get_long)(int) const = &ns::Widget<long>::get;
    void *p;
    std::memcpy(&p, &get_int, sizeof p);
    std::printf("ns::Widget<int>::get(int) const|%p\n", p);
    std::memcpy(&p, &get_long, sizeof p);
    std::printf("ns::Widget<long>::get(int) const|%p\n", p);
    std::printf("ns::Widget<int>::make(int)|%p\n", (void *)&ns::Widget<int>::make);
    std::printf("ns::over(int)|%p\n", (void *)(int (*)(int))ns::over);
    std::printf("ns::over(double)|%p\n", (void *)(double (*)(double))ns::over);
    std::printf("ns::over(char const*, unsigned int)|%p\n",
                (void *)(int (*)(const char *, unsigned))ns::over);
    std::printf("(anonymous namespace)::hidden(int)|%p\n", (void *)hidden);
    std::printf("int twice<int>(int)|%p\n", (void *)twice<int>);
    std::printf("main|%p\n", (void *)main);
    ns::Widget<int> w = ns::Widget<int>::make(argc);
    ns::Widget<long> wl{2};
    std::printf("ready %d\n", w.get(1) + (int)wl.get(2) + ns::over(1) + (int)ns::over(1.5)
                + ns::over("x", 1u) + hidden(3) + twice(2));
    std::fflush(stdout);
    if (argc > 1 && std::strcmp(argv[1], "wait") == 0)
        while (std::getchar() != EOF)
            ;
    return 0;
}
