/*
 * cleanups: destructors that run while a C++ exception unwinds, each in the
 * frame that owned its object, before any catch (clang++ runs no exit hook
 * while unwinding; g++ does).  Expected tree: cases.py.
 *
 *   main
 *     guarded_catch x4 (k = 0..3) > Guard; thrower (k+1 levels, each with
 *                                   a Guard); ~Guard; handled
 *     outer x2 > rethrower > Guard; thrower (3 levels); note; ~Guard
 *              > handled                        (catch (...) and throw;)
 *     make_holder x2 > Holder::Holder > Guard x2; thrower (2); ~Guard x2;
 *                      note                     (a constructor's
 *                    > handled                   function-try-block)
 *     ftb x2 > Guard; thrower (1); ~Guard; handled   (a function-try-block)
 *     through_function > Guard; guarded_thrower (through std::function,
 *                        uninstrumented: uninst_call.cc) > Guard;
 *                        thrower (3); ~Guard ; ~Guard; handled
 *     sort_throw > Guard; less_guarded x7 (through std::sort; the 7th
 *                  throws) > Guard, ~Guard ; ~Guard; handled
 *   child 1: main > terminate_in_noexcept > must_not_throw > Guard;
 *            thrower (2) ; [~Guard: clang only] ; on_terminate
 *                                               (std::terminate from a
 *                                                noexcept frame)
 *   child 2: main > terminate_uncaught > Guard; thrower (1 level)
 *            > on_terminate                     (no handler: no unwinding)
 */
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sys/wait.h>
#include <unistd.h>

struct Err {
    int at;
};
static volatile long sink;
static int nless;

struct Guard {
    int id;
    explicit Guard(int i) : id(i) { sink++; }
    ~Guard() { sink += id; }
};

void call_through(void (*fn)(int), int arg);            // uninst_call.cc
void sort_with(int *b, int *e, bool (*less)(int, int)); // uninst_call.cc

/* Never inlined: clang runs no exit hook for an inlined callee the
 * exception leaves, and which inlined function a landing pad belongs to is
 * not known at run time (docs/exactness.md, the limits). */
__attribute__((noinline)) static void thrower(int n)
{
    Guard g(n);
    if (n == 0)
        throw Err{ n };
    thrower(n - 1);
    sink++;
}

static void handled()
{
    sink++;
}
static void note()
{
    sink++;
}

static void guarded_catch(int k)
{
    try {
        Guard g(10);
        thrower(k);
    } catch (Err &) {
        handled();
    }
}

static void rethrower()
{
    Guard g(20);
    try {
        thrower(2);
    } catch (...) {
        note();
        throw;
    }
}

static void outer()
{
    try {
        rethrower();
    } catch (Err &) {
        handled();
    }
}

struct Holder {
    Guard a, b;
    Holder()
    try : a(30), b(31) {
        thrower(1);
    } catch (...) {
        note();
    }
};

static void make_holder()
{
    try {
        Holder h;
        sink += h.a.id;
    } catch (Err &) {
        handled();
    }
}

static void ftb()
try {
    Guard g(40);
    thrower(0);
} catch (Err &) {
    handled();
}

static void guarded_thrower(int n)
{
    Guard g(51);
    thrower(n);
}

static void through_function()
{
    try {
        Guard g(50);
        call_through(guarded_thrower, 2);
    } catch (Err &) {
        handled();
    }
}

static bool less_guarded(int a, int b)
{
    Guard g(61);
    if (++nless == 7)
        throw Err{ 7 };
    return a < b;
}

static int vals[16] = { 9, 3, 14, 1, 7, 12, 5, 0, 11, 2, 15, 6, 10, 4, 13, 8 };

static void sort_throw()
{
    int v[16];
    for (int i = 0; i < 16; i++)
        v[i] = vals[i];
    try {
        Guard g(60);
        sort_with(v, v + 16, less_guarded);
    } catch (Err &) {
        handled();
    }
}

static void on_terminate()
{
    sink++;
    std::printf("terminate\n");
    std::fflush(stdout);
    _exit(0);
}

static void must_not_throw() noexcept
{
    Guard g(70);
    thrower(2);
}

static void terminate_in_noexcept()
{
    must_not_throw();
}

static void terminate_uncaught()
{
    Guard g(80);
    thrower(0);
}

static void in_child(void (*fn)())
{
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        std::set_terminate(on_terminate);
        fn();
        _exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    sink += status;
}

int main()
{
    for (int k = 0; k < 4; k++)
        guarded_catch(k);
    for (int i = 0; i < 2; i++)
        outer();
    for (int i = 0; i < 2; i++)
        make_holder();
    for (int i = 0; i < 2; i++)
        ftb();
    through_function();
    sort_throw();
    in_child(terminate_in_noexcept);
    in_child(terminate_uncaught);
    std::printf("cleanups: %ld %d\n", (long)sink, nless);
    return 0;
}
