/*
 * cxx: C++ names, demangled as c++filt prints them (tests/core/test_cxx.py).
 *
 *   main                          (in the order of the calls)
 *     geo::area_sum(geo::Shape const* const*, int)            x1
 *       geo::Square::area() const                              x2   (virtual)
 *       geo::Circle::area() const                              x1   (virtual)
 *     geo::Circle::Circle(double)                              x1   (constructor)
 *       geo::Shape::Shape()                                    x1
 *     geo::Square::Square(double)                              x2
 *       geo::Shape::Shape()                                    x1 each
 *     calc::twice<int>(int)                                    x3   (template)
 *     calc::twice<double>(double)                              x2
 *     calc::f(int)                                             x1   (overloads)
 *     calc::f(double)                                          x2
 *     calc::f(char const*)                                     x3
 *     calc::(anonymous namespace)::hidden(long)                x1
 *     void calc::apply_n<main::{lambda(int)#1}>(main::{lambda(int)#1}, int)   x1
 *       main::{lambda(int)#1}::operator()(int) const           x4
 *
 * No global objects, no iostream, no STL: their compiler-generated and
 * header code would be instrumented too and add nodes the test cannot know.
 * The constructors are empty-bodied member initialisers, declared KEEP so
 * the compiler calls them rather than inlining.
 */
#include <cstdio>
#include "progs.h"

volatile long sink;

namespace geo {

struct Shape {
    KEEP Shape() {}
    virtual double area() const = 0;
};

struct Circle : Shape {
    double r;
    KEEP explicit Circle(double radius) : r(radius) {}
    KEEP double area() const override { return 3.0 * r * r; }
};

struct Square : Shape {
    double s;
    KEEP explicit Square(double side) : s(side) {}
    KEEP double area() const override { return s * s; }
};

KEEP double area_sum(const Shape *const *shapes, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += shapes[i]->area();
    return sum;
}

} // namespace geo

namespace calc {

template <typename T> KEEP T twice(T x) { return x + x; }

KEEP long f(int x) { return x; }
KEEP long f(double x) { return (long)(x * 10); }
KEEP long f(const char *s) { return s[0]; }

namespace {
KEEP long hidden(long x) { return x - 1; }
}

template <typename F> KEEP void apply_n(F fn, int n)
{
    for (int i = 0; i < n; i++)
        fn(i);
}

} // namespace calc

int main()
{
    geo::Circle c(1.0);
    geo::Square s1(2.0), s2(3.0);
    const geo::Shape *shapes[] = { &s1, &c, &s2 };
    double a = geo::area_sum(shapes, 3);

    long t = calc::twice(1) + calc::twice(2) + calc::twice(3);
    double d = calc::twice(1.5) + calc::twice(2.5);
    long o = calc::f(7) + calc::f(1.5) + calc::f(2.5)
             + calc::f("a") + calc::f("b") + calc::f("c");
    long h = calc::hidden(10);

    long acc = 0;
    calc::apply_n([&acc](int i) __attribute__((noinline)) { acc += i; sink++; }, 4);

    std::printf("cxx: %g %ld %g %ld %ld %ld\n", a, t, d, o, h, acc);
    return 0;
}
