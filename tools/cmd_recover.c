/*
 * hookit recover: the profile of a process that was killed (SIGKILL, OOM
 * killer) from the arena it left in the registry: everything it collected
 * up to the kill.  The leftover is removed once the profile is written.
 */
#include "tools/cli.h"
#include "tools/live_cli.h"
#include <hookit/a2n.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const recover_usage =
    "usage: hookit recover [-o DIR] PID | --all\n"
    "       hookit recover --remove PID | --all\n"
    "       hookit recover                 (list only)\n"
    "\n"
    "Write the profile of a profiled process that died without writing one\n"
    "(killed by SIGKILL, say) from what it left in the registry, then remove\n"
    "that.  Without PID, list your registry and do nothing: each leftover of\n"
    "a process that is gone (its program, when it started and when it was\n"
    "last seen alive), which would be recovered, and each process still\n"
    "running (not a leftover); --all recovers every leftover (an unreadable\n"
    "one is removed); --remove removes leftovers without a profile.  The\n"
    "profile is named\n"
    "as the process would have named it (hookit.EXE.PID.prof) and has\n"
    "end=killed; frames open at the kill count up to the last function entry\n"
    "the process recorded.  A running process is refused (use snapshot).\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR   where to write (default: the current directory)\n"
    "  -a, --all          recover (and remove) every leftover listed\n"
    "  -r, --remove       remove the leftover of PID (or with --all every one)\n"
    "                     without writing a profile; a running process is refused\n"
    "  -h, --help         this help\n";

static void remove_leftover(const char *arena_path)
{
    char maps[8192];
    snprintf(maps, sizeof maps, "%.*s.maps", (int)(strlen(arena_path) - strlen(".arena")), arena_path);
    unlink(arena_path);
    unlink(maps);
}

static int write_named(const struct profile *p, const char *dir, pid_t pid, char *name, size_t size)
{
    const char *exe = p->process.exe ? p->process.exe : "", *slash = strrchr(exe, '/');
    char base[256];
    snprintf(base, sizeof base, "%.200s", slash ? slash + 1 : exe);
    for (char *c = base; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-' || *c == '+'))
            *c = '_';
    char err[1024];
    for (int attempt = 0; attempt < 100; attempt++) {
        if (attempt)
            snprintf(name, size, "hookit.%s.%d.%d.prof", *base ? base : "unknown", (int)pid, attempt);
        else
            snprintf(name, size, "hookit.%s.%d.prof", *base ? base : "unknown", (int)pid);
        if (profile_write_file(p, dir, name, err, sizeof err) == 0)
            return EXIT_OK;
        if (errno != EEXIST)
            break;
    }
    return cli_fail("%s", err);
}

/* A dead process's leftover that is not a readable arena (killed while it
 * was being created, damaged): nothing to recover, removed. */
static int remove_unreadable(pid_t pid, const char *err)
{
    char dir[8192], path[8300], why[1024];
    if (live_registry_for(pid, dir, sizeof dir, why, sizeof why) != 0)
        return cli_fail("%s", err);
    snprintf(path, sizeof path, "%s/%d.arena", dir, (int)pid);
    remove_leftover(path);
    printf("process %d: removed an unreadable leftover (%s)\n", (int)pid, err);
    return EXIT_OK;
}

/* What recover_one would do, said and not done. */
/* A process that ended normally but could not remove its registry files
 * (it changed user): nothing to recover, its profile was written. */
static int ended_normally(pid_t pid, int act)
{
    char path[8300];
    if (!(kill(pid, 0) != 0 && errno == ESRCH) || !live_leftover_ended(pid, path, sizeof path))
        return 0;
    if (act) {
        remove_leftover(path);
        printf("process %d: ended normally (its profile was written): removed %s\n", (int)pid, path);
    } else {
        printf("process %d: ended normally (its profile was written): %s would be removed\n",
               (int)pid, path);
    }
    return 1;
}

/* "3 min", "2 h 5 min", "4 days": how long ago, for the list. */
static const char *ago(uint64_t then_ns, char *buf, size_t size)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    uint64_t s = now_ns > then_ns ? (now_ns - then_ns) / 1000000000u : 0;
    if (s < 60)
        snprintf(buf, size, "%llu s", (unsigned long long)s);
    else if (s < 3600)
        snprintf(buf, size, "%llu min", (unsigned long long)(s / 60));
    else if (s < 86400)
        snprintf(buf, size, "%llu h %llu min", (unsigned long long)(s / 3600),
                 (unsigned long long)(s / 60 % 60));
    else
        snprintf(buf, size, "%llu days", (unsigned long long)(s / 86400));
    return buf;
}

static const char *wall_time(uint64_t ns, const char *format, char *buf, size_t size)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(buf, size, format, &tm))
        snprintf(buf, size, "?");
    return buf;
}

/* "killed, /usr/bin/app, started 2026-11-28 14:02:11, last alive 14:02:12
 * (1 h 3 min ago), 2 threads": a dead process's leftover, for the list. */
static void describe_dead(struct live *l)
{
    char start[64], last[64], since[64], why[1024];
    struct live_snapshot snap;
    printf("killed, %s", live_exe(l));
    if (live_snapshot(l, LIVE_THREAD, &snap, why, sizeof why) != 0) {
        printf(" (%s)", why);
        return;
    }
    struct profile *p = live_profile(l, &snap, "killed"); /* its start, and how long it ran */
    if (p) {
        uint64_t seen = p->process.start_ns + p->process.duration_ns;
        printf(", started %s, last alive %s (%s ago)",
               wall_time(p->process.start_ns, "%Y-%m-%d %H:%M:%S", start, sizeof start),
               wall_time(seen, "%H:%M:%S", last, sizeof last), ago(seen, since, sizeof since));
        profile_free(p);
    }
    printf(", %u thread%s", snap.nthreads, snap.nthreads == 1 ? "" : "s");
    live_snapshot_free(&snap);
}

static int list_one(pid_t pid, int *found, int *running)
{
    char err[8192];
    struct live *l = live_attach(pid, LIVE_DEAD_OK, err, sizeof err);
    if (!l && ended_normally(pid, 0)) {
        (*found)++;
        return EXIT_OK;
    }
    if (!l) {
        if (kill(pid, 0) != 0 && errno == ESRCH) {
            printf("process %d: unreadable leftover, would be removed (%s)\n", (int)pid, err);
            (*found)++;
        }
        return EXIT_OK;
    }
    if (!live_alive(l)) {
        printf("process %d: ", (int)pid);
        describe_dead(l);
        printf(": %s would be recovered\n", live_arena_path(l));
        (*found)++;
    } else {
        printf("process %d: running, %s: not a leftover (hookit snapshot %d reads it)\n", (int)pid,
               live_exe(l), (int)pid);
        (*running)++;
    }
    live_detach(l);
    return EXIT_OK;
}

/* --remove PID: the leftover of a process that is gone, without a profile. */
static int remove_one(pid_t pid, int all)
{
    char err[8192];
    struct live *l = live_attach(pid, LIVE_DEAD_OK, err, sizeof err);
    if (!l && ended_normally(pid, 1))
        return EXIT_OK;
    if (!l && kill(pid, 0) != 0 && errno == ESRCH)
        return remove_unreadable(pid, err);
    if (!l)
        return all ? EXIT_OK : cli_fail("%s", err); /* --all: a running process of another kind */
    if (live_alive(l)) {
        live_detach(l);
        return all ? EXIT_OK : cli_fail("process %d is running: not a leftover, nothing removed", (int)pid);
    }
    char path[8192];
    snprintf(path, sizeof path, "%s", live_arena_path(l));
    printf("process %d: ", (int)pid);
    describe_dead(l);
    live_detach(l);
    remove_leftover(path);
    printf(": removed %s, no profile written\n", path);
    return EXIT_OK;
}

static int recover_one(pid_t pid, const char *dir, int quiet_if_alive, int all)
{
    char err[8192];
    struct live *l = live_attach(pid, LIVE_DEAD_OK, err, sizeof err);
    if (!l && ended_normally(pid, 1))
        return EXIT_OK;
    if (!l && all && kill(pid, 0) != 0 && errno == ESRCH)
        return remove_unreadable(pid, err);
    if (!l)
        return cli_fail("%s", err);
    if (live_alive(l)) {
        live_detach(l);
        if (quiet_if_alive)
            return EXIT_OK;
        return cli_fail("process %d is running: nothing to recover (hookit snapshot reads it)", (int)pid);
    }
    char path[8192], maps[8192];
    snprintf(path, sizeof path, "%s", live_arena_path(l));
    snprintf(maps, sizeof maps, "%.*s.maps", (int)(strlen(path) - strlen(".arena")), path);
    struct a2n *a2n = a2n_open_maps(maps);
    struct profile *p = live_cli_profile(l, LIVE_THREAD, "killed", a2n, NULL);
    int rc = EXIT_FAIL;
    if (p) {
        char name[512];
        rc = write_named(p, dir, pid, name, sizeof name);
        if (rc == EXIT_OK) {
            remove_leftover(path);
            printf("process %d: recovered %s/%s (%u threads)%s\n", (int)pid, dir, name, p->nthreads,
                   a2n ? "" : ", names unresolved: no saved maps");
        }
        profile_free(p);
    }
    a2n_close(a2n);
    live_detach(l);
    return rc;
}

int cmd_recover(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "all", no_argument, NULL, 'a' },
        { "remove", no_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    const char *dir = ".";
    int opt, act_all = 0, remove = 0;
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":o:arh", opts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            remove = 1;
            break;
        case 'o':
            dir = optarg;
            break;
        case 'a':
            act_all = 1;
            break;
        case 'h':
            fputs(recover_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("recover", opt, argv);
        }
    }
    if (argc - optind > 1)
        return cli_usage_error("recover", "at most one PID");
    if (argc - optind == 1 && act_all)
        return cli_usage_error("recover", "a PID or --all, not both");
    if (remove && argc - optind == 0 && !act_all)
        return cli_usage_error("recover", "--remove needs a PID or --all");
    if (argc - optind == 1) {
        pid_t pid = live_cli_pid("recover", argv[optind]);
        return pid < 0 ? EXIT_USAGE : remove ? remove_one(pid, 0) : recover_one(pid, dir, 0, 0);
    }
    pid_t *pids;
    char err[8192];
    int n = live_list(geteuid(), &pids, err, sizeof err);
    if (n < 0)
        return cli_fail("%s", err);
    int rc = EXIT_OK, found = 0, running = 0;
    if (remove) {
        for (int i = 0; i < n; i++)
            if (remove_one(pids[i], 1) != EXIT_OK)
                rc = EXIT_FAIL;
        free(pids);
        return rc;
    }
    if (!act_all) {
        for (int i = 0; i < n; i++)
            list_one(pids[i], &found, &running);
        free(pids);
        if (!found)
            printf("nothing to recover%s\n", running ? " (the processes above are running)" : "");
        else
            printf(
                "%d leftover(s) of processes that are gone: hookit recover PID recovers one, "
                "hookit recover --all all of them; hookit recover --remove PID (or --remove --all) removes "
                "without a profile\n",
                found);
        return EXIT_OK;
    }
    for (int i = 0; i < n; i++) {
        if (kill(pids[i], 0) == 0 || errno != ESRCH) {
            /* Alive, or a reused pid: recover_one tells them apart. */
            if (recover_one(pids[i], dir, 1, 1) != EXIT_OK)
                rc = EXIT_FAIL;
            continue;
        }
        found++;
        if (recover_one(pids[i], dir, 0, 1) != EXIT_OK)
            rc = EXIT_FAIL;
    }
    free(pids);
    if (!found && rc == EXIT_OK)
        printf("nothing to recover\n");
    return rc;
}
