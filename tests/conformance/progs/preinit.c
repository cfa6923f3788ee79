/*
 * preinit: instrumented code in .preinit_array (runs before any library's
 * constructor, hookit's included), in a constructor of an instrumented shared
 * library (libctorlib.so) and of the program, and in a destructor.
 * Reference: refstack.
 */
#include <stdio.h>

static volatile long sink;
void lib_value(void);

static void early_work(void) { sink++; }
static void early_init(int argc, char **argv, char **envp) { early_work(); early_work(); }
__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) = early_init;

static void ctor_work(void) { sink++; }
__attribute__((constructor)) static void exe_ctor(void) { ctor_work(); }

static void dtor_work(void) { sink++; }
__attribute__((destructor)) static void exe_dtor(void) { dtor_work(); }

static void body(void) { sink++; lib_value(); }

int main(void)
{
    body();
    printf("preinit: %ld\n", (long)sink);
    return 0;
}
