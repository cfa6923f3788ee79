/* An interpreter loop in the shape of Lua's: execute() runs "opcodes",
 * some of which call a function through call() -> precall() -> execute()
 * again, so execute recurses through two other functions. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void get(int i) { sink += i; }
__attribute__((noinline)) void set(int i) { sink ^= i; }
__attribute__((noinline)) void arith(int i) { for (int k = 0; k < 20; k++) sink += k * i; }
void execute(int depth);
__attribute__((noinline)) void precall(int depth) { get(depth); execute(depth - 1); }
__attribute__((noinline)) void call(int depth) { precall(depth); set(depth); }

void execute(int depth)
{
    for (int pc = 0; pc < 6; pc++) {
        switch (pc % 3) {
        case 0: get(pc); break;
        case 1: arith(pc); break;
        default: if (depth > 0 && pc == 5) call(depth); else set(pc); break;
        }
    }
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 30;
    for (int i = 0; i < 50; i++)
        execute(depth);
    get(0);
    printf("%ld\n", sink);
    return 0;
}
