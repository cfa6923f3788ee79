/* Compiled WITHOUT -finstrument-functions: frames hookit cannot see
 * (a std::function and its invoker, std::sort) between an instrumented
 * caller and an instrumented callee that throws (cleanups.cc). */
#include <algorithm>
#include <functional>
void call_through(void (*fn)(int), int arg)
{
    std::function<void()> f = [=] { fn(arg); };
    f();
}
void sort_with(int *b, int *e, bool (*less)(int, int))
{
    std::sort(b, e, less);
}
