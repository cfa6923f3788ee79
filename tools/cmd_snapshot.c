/*
 * hookit snapshot: a normal profile of a running process, taken from its
 * live trees without stopping it (docs/live.md).
 */
#include "tools/cli.h"
#include "tools/live_cli.h"
#include <hookit/a2n.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const snapshot_usage =
    "usage: hookit snapshot [--consistency=thread|process] [-o FILE] PID\n"
    "\n"
    "Write a profile of the running process PID (profiled by libjprof) from\n"
    "its live call trees; open frames count their time up to the snapshot.\n"
    "The file is a normal profile: report, export, merge and diff read it.\n"
    "\n"
    "Options:\n"
    "  -c, --consistency=thread   each thread's tree is copied whole, never torn;\n"
    "                             threads are never stopped (default)\n"
    "  -c, --consistency=process  every thread waits at its next hook while the\n"
    "                             copy is taken (bounded); the pause is measured\n"
    "                             and recorded in the profile (live_pause_ns)\n"
    "  -o, --output FILE          where to write (default hookit.EXE.PID.snapshot.prof)\n"
    "  -h, --help                 this help\n";

static void default_name(char *out, size_t size, struct live *l)
{
    const char *exe = live_exe(l), *slash = strrchr(exe, '/');
    const char *base = slash ? slash + 1 : exe;
    snprintf(out, size, "hookit.%.200s.%d.snapshot.prof", *base ? base : "unknown", (int)live_pid(l));
}

int cmd_snapshot(int argc, char **argv)
{
    static const struct option opts[] = {
        { "consistency", required_argument, NULL, 'c' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    enum live_consistency c = LIVE_THREAD;
    const char *out = NULL;
    int opt;
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":c:o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (!strcmp(optarg, "thread"))
                c = LIVE_THREAD;
            else if (!strcmp(optarg, "process"))
                c = LIVE_PROCESS;
            else
                return cli_usage_error("snapshot", "--consistency must be thread or process, not '%s'", optarg);
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(snapshot_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("snapshot", opt, argv);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("snapshot", optind >= argc ? "missing PID" : "one PID only");
    pid_t pid = live_cli_pid("snapshot", argv[optind]);
    if (pid < 0)
        return EXIT_USAGE;
    struct live *l = live_cli_attach(pid, 0);
    if (!l)
        return EXIT_FAIL;
    struct a2n *a2n = a2n_open(pid);
    struct live_snapshot s;
    struct profile *p = live_cli_profile(l, c, "snapshot", a2n, &s);
    int rc = EXIT_FAIL;
    if (p) {
        char name[512];
        if (!out) {
            default_name(name, sizeof name, l);
            out = name;
        }
        rc = live_cli_write(out, p);
        if (rc == EXIT_OK) {
            printf("wrote %s: pid %d, %u threads, consistency %s", out, (int)pid, s.nthreads,
                   c == LIVE_PROCESS ? "process" : "thread");
            if (c == LIVE_PROCESS)
                printf(", pause %.3f ms (gathering %.3f ms, copying %.3f ms; %u threads parked, "
                       "%u outside the hooks)", s.pause_ns / 1e6, s.gather_ns / 1e6, s.copy_ns / 1e6,
                       s.parked, s.quiet);
            if (c == LIVE_PROCESS && s.runnable_ns != UINT64_MAX && s.runnable_ns > 0)
                printf(", the reader waiting for a CPU %.3f ms of it", s.runnable_ns / 1e6);
            printf("\n");
        }
        live_snapshot_free(&s);
        profile_free(p);
    }
    a2n_close(a2n);
    live_detach(l);
    return rc;
}
