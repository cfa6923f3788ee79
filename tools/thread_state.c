/* A thread's scheduler state and CPU time from /proc (thread_state.h). */
#include "tools/thread_state.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int thread_state_read(pid_t pid, pid_t tid, struct thread_state *s)
{
    char path[64], buf[1024];
    s->kernel = '?';
    s->cpu_ns = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the name (field 2) may hold spaces and parentheses: fields go on
     * after the last ')' */
    const char *p = strrchr(buf, ')');
    char state;
    unsigned long long utime, stime;
    if (!p
        || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &utime, &stime)
            != 3)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    s->kernel = state;
    s->cpu_ns = (utime + stime) * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
    return 0;
}

const char *thread_state_name(char kernel)
{
    switch (kernel) {
    case 'R':
        return "running";
    case 'S':
        return "sleeping";
    case 'D':
        return "waiting uninterruptibly";
    case 'T':
        return "stopped";
    case 't':
        return "stopped by a tracer";
    case 'Z':
        return "ended (zombie)";
    case 'X':
        return "ended";
    case 'I':
        return "idle";
    default:
        return "gone";
    }
}
