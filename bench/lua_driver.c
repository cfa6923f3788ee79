/*
 * lua_driver: the Lua 5.4 workload of `make bench` (bench/benchlib/programs.py).
 * Embeds the interpreter (Debian's lua5.4 sources, fetched at bench time,
 * compiled with the same flags in every build) and runs bench/lua/work.lua
 * with the global N set, the way an application embedding Lua runs its
 * scripts: the interpreter's C functions are the instrumented code.
 *
 *   lua_driver SCRIPT N
 *
 * prints, as bench/sqlite_driver.c does:
 *     ns=<wall ns> cpu_ns=<process CPU ns> checksum=<the script's result>
 *     end_cpu_ns=<..> end_ns=<..>
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: lua_driver SCRIPT N\n");
        return 2;
    }
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushinteger(L, atoll(argv[2]));
    lua_setglobal(L, "N");
    long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (luaL_dofile(L, argv[1]) != LUA_OK) {
        fprintf(stderr, "lua_driver: %s\n", lua_tostring(L, -1));
        return 1;
    }
    long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
    long long sum = (long long)lua_tointeger(L, -1);
    lua_close(L);
    printf("ns=%lld cpu_ns=%lld checksum=%016llx", t1 - t0, c1 - c0, (unsigned long long)sum);
    printf(" end_cpu_ns=%lld", now_ns(CLOCK_PROCESS_CPUTIME_ID));
    printf(" end_ns=%lld\n", now_ns(CLOCK_MONOTONIC));
    return 0;
}
