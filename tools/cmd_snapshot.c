/*
 * hookit snapshot: a normal profile of a running process, taken from its
 * live trees without stopping it (docs/live.md).
 */
#include "tools/cli.h"
#include "tools/live_cli.h"
#include "tools/live_set.h"
#include "tools/live_readers.h"
#include "profile/procinfo.h"
#include <hookit/a2n.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const snapshot_usage =
    "usage: hookit snapshot [--consistency=thread|process|job] [-o FILE] PID\n"
    "       hookit snapshot [--consistency=...] [-o FILE] --pids P1,P2... | --family PID |\n"
    "                       --job ID | --all\n"
    "       mpirun --map-by ppr:1:node hookit snapshot --readers [--consistency=...] --job ID\n"
    "\n"
    "Write a profile of the running process PID (profiled by libjprof) from\n"
    "its live call trees; open frames count their time up to the snapshot.\n"
    "The file is a normal profile: report, export, merge and diff read it.\n"
    "Of several processes, one profile: what hookit merge makes of their\n"
    "snapshots (of MPI ranks, the job profile), with each one's pause.\n"
    "\n"
    "Options:\n"
    "  -c, --consistency=thread   each thread's tree is copied whole, never torn;\n"
    "                             threads are never stopped (default)\n"
    "  -c, --consistency=process  every thread waits at its next hook while the\n"
    "                             copy is taken (bounded); the pause is measured\n"
    "                             and recorded in the profile (live_pause_ns)\n"
    "  -c, --consistency=job      every thread of every process waits at once\n"
    "                             (several processes; one process: as process)\n"
    "  -o, --output FILE          where to write (default hookit.EXE.PID.snapshot.prof,\n"
    "                             of several hookit.EXE.SET.snapshot.prof)\n" LIVE_SET_USAGE
    "      --readers        one of several readers started by an MPI launcher, one\n"
    "                       per host: each reads the set's processes on its host\n"
    "                       (readers on one host split them), synchronised over\n"
    "                       MPI; reader 0 writes the one snapshot (docs/live.md)\n"
    "  -h, --help                 this help\n";

static void default_name(char *out, size_t size, struct live *l)
{
    const char *exe = live_exe(l), *slash = strrchr(exe, '/');
    const char *base = slash ? slash + 1 : exe;
    snprintf(out, size, "hookit.%.200s.%d.snapshot.prof", *base ? base : "unknown", (int)live_pid(l));
}

/* "pause 3.204 ms (copying 1.100 ms; the longest process 3.100 ms, pid 42)" */
static void print_set_pause(enum live_consistency c, const struct live_set_pause *sp, const struct profile *p)
{
    if (c == LIVE_THREAD)
        return;
    printf(", pause %.3f ms%s (copying %.3f ms; the longest process %.3f ms, pid %d)", sp->pause_ns / 1e6,
           c == LIVE_PROCESS ? " in all, one process after another" : "", sp->copy_ns / 1e6,
           sp->pause_max_ns / 1e6, (int)sp->pause_max_pid);
    uint64_t run = 0;
    if (profile_meta_u64(p, "live_set_pause_runnable_ns", &run) == 0 && run > 0)
        printf(", the reader waiting for a CPU %.3f ms of it", run / 1e6);
}

static int snapshot_set(const struct live_set_sel *sel, enum live_consistency c, const char *out)
{
    struct live **ls;
    uint32_t n;
    int rc = live_set_open(sel, "snapshot", 0, &ls, &n);
    if (rc != EXIT_OK)
        return rc;
    struct live_set_pause sp;
    struct profile *p = live_set_profile(ls, n, c, &sp, NULL);
    rc = p ? EXIT_OK : EXIT_FAIL;
    char name[512], set[160];
    if (p && !out) {
        const char *exe = live_exe(ls[0]), *slash = strrchr(exe, '/');
        live_set_name(sel, set, sizeof set);
        snprintf(name, sizeof name, "hookit.%.200s.%s.snapshot.prof",
                 slash && slash[1] ? slash + 1 : "unknown", set);
        out = name;
    }
    if (p)
        rc = live_cli_write(out, p);
    if (rc == EXIT_OK) {
        static const char *const level[] = { "thread", "process", "job" };
        printf("wrote %s: %u processes, %u threads, consistency %s", out, n, sp.threads, level[c]);
        print_set_pause(c, &sp, p);
        printf("\n");
    }
    profile_free(p);
    live_set_close(ls, n);
    return rc;
}

static int snapshot_readers(const struct live_set_sel *sel, enum live_consistency c, const char *out)
{
    char name[512], set[160];
    if (!out) {
        live_set_name(sel, set, sizeof set);
        snprintf(name, sizeof name, "hookit.%s.snapshot.prof", set);
        out = name;
    }
    return live_readers_snapshot(sel, c, out);
}

int cmd_snapshot(int argc, char **argv)
{
    static const struct option opts[] = {
        { "consistency", required_argument, NULL, 'c' },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        LIVE_SET_OPTIONS,
        { "readers", no_argument, NULL, 'R' },
        { 0, 0, 0, 0 },
    };
    enum live_consistency c = LIVE_THREAD;
    struct live_set_sel sel = { SET_NONE, NULL };
    const char *out = NULL;
    int opt, readers = 0;
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":c:o:hP:F:J:AR", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (!strcmp(optarg, "thread"))
                c = LIVE_THREAD;
            else if (!strcmp(optarg, "process"))
                c = LIVE_PROCESS;
            else if (!strcmp(optarg, "job"))
                c = LIVE_JOB;
            else
                return cli_usage_error("snapshot", "--consistency must be thread, process or job, not '%s'",
                                       optarg);
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(snapshot_usage, stdout);
            return EXIT_OK;
        case 'R':
            readers = 1;
            break;
        default: {
            int taken = live_set_option(&sel, opt, optarg ? optarg : "", "snapshot");
            if (taken < 0)
                return EXIT_USAGE;
            if (!taken)
                return cli_option_error("snapshot", opt, argv);
        }
        }
    }
    if (sel.kind != SET_NONE) {
        if (optind != argc)
            return cli_usage_error("snapshot", "a PID or a set of processes, not both");
        return readers ? snapshot_readers(&sel, c, out) : snapshot_set(&sel, c, out);
    }
    if (readers)
        return cli_usage_error("snapshot", "--readers reads a set: --job, --all, --pids or --family");
    if (c == LIVE_JOB)
        c = LIVE_PROCESS; /* one process: every thread at once is the process level */
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
