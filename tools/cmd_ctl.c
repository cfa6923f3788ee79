/*
 * hookit ctl: control a running profiled process from outside (JPROF
 * rtdriver's role): start, stop, flush, reset, zerobase.  The command is
 * carried out by the process's control thread (profiler/jprof/live/agent.c) or
 * by one of its threads at its next hook, whichever claims it first; it is
 * acknowledged when done (docs/live.md).
 */
#include "tools/cli.h"
#include "tools/live_cli.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const ctl_usage =
    "usage: hookit ctl [--timeout S] PID COMMAND\n"
    "       hookit ctl [--timeout S] --all COMMAND\n"
    "\n"
    "Send COMMAND to the running process PID (profiled by libjprof), or with\n"
    "--all to every profiled process of yours, and wait until it is done:\n"
    "  start     turn collection on (see JPROFOPTS=nostart)\n"
    "  stop      turn collection off\n"
    "  flush     write a profile now and keep collecting\n"
    "  reset     discard everything collected so far\n"
    "  zerobase  zero every count and time, keep the call trees\n"
    "\n"
    "The process's control thread carries the command out at once, even when\n"
    "every thread of the program is blocked (without one, JPROFOPTS=nocontrol,\n"
    "a thread does when it next runs an instrumented function).  Exit 0 when\n"
    "every process acknowledged it; 1 when one refused, ended, or did not\n"
    "take it within the timeout (the command is then withdrawn).  A thread\n"
    "that is blocked applies reset/zerobase to its own tree when it next runs\n"
    "a hook.\n"
    "\n"
    "Options:\n"
    "  -a, --all          every profiled process of the user\n"
    "  -t, --timeout S    how long to wait for each process (default 5)\n"
    "  -h, --help         this help\n";

static const struct {
    const char *name;
    uint32_t cmd;
} commands[] = {
    { "start", ARENA_CMD_START }, { "stop", ARENA_CMD_STOP }, { "flush", ARENA_CMD_FLUSH },
    { "reset", ARENA_CMD_RESET }, { "zerobase", ARENA_CMD_ZEROBASE },
};

static int send_one(pid_t pid, const char *name, uint32_t cmd, int timeout_ms)
{
    struct live *l = live_cli_attach(pid, 0);
    if (!l)
        return EXIT_FAIL;
    /* Where a flush writes, read from /proc while the process surely runs:
     * it may end right after the flush, before we look (under qemu-user,
     * where this command is slow, a test's program did). */
    char dir[PATH_MAX], file[NAME_MAX + 1], before[NAME_MAX + 1] = "";
    if (cmd == ARENA_CMD_FLUSH) {
        live_cli_outdir(pid, dir, sizeof dir);
        live_cli_last_name(dir, pid, before, sizeof before);
    }
    char err[1024];
    uint32_t result;
    int rc = live_command(l, cmd, timeout_ms, &result, err, sizeof err);
    live_detach(l);
    if (rc != 0)
        return cli_fail("%s", err);
    if (result != 0)
        return cli_fail("process %d: %s failed: %s", (int)pid, name, strerror((int)result));
    printf("process %d: %s done", (int)pid, name);
    /* a flush wrote a profile: the next name after the last before it (not
     * the newest: the process may have ended and written its exit profile
     * since, as a test's program did under qemu-user) */
    if (cmd == ARENA_CMD_FLUSH) {
        if (live_cli_next_name(dir, pid, before, file, sizeof file))
            printf(": wrote %s/%s", dir, file);
    }
    putchar('\n');
    fflush(stdout);
    return EXIT_OK;
}

int cmd_ctl(int argc, char **argv)
{
    static const struct option opts[] = {
        { "all", no_argument, NULL, 'a' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    int all = 0, timeout_ms = 5000, opt;
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":at:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            all = 1;
            break;
        case 't':
            if ((timeout_ms = live_cli_ms(optarg)) < 0)
                return cli_usage_error("ctl", "--timeout needs a number of seconds, not '%s'", optarg);
            break;
        case 'h':
            fputs(ctl_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("ctl", opt, argv);
        }
    }
    int want = all ? 1 : 2;
    if (argc - optind != want)
        return cli_usage_error("ctl", all ? "--all takes a COMMAND and no PID" : "need PID and COMMAND");
    const char *name = argv[argc - 1];
    uint32_t cmd = 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            cmd = commands[i].cmd;
    if (!cmd)
        return cli_usage_error("ctl", "unknown command '%s' (start, stop, flush, reset, zerobase)", name);
    if (!all) {
        pid_t pid = live_cli_pid("ctl", argv[optind]);
        return pid < 0 ? EXIT_USAGE : send_one(pid, name, cmd, timeout_ms);
    }
    pid_t *pids;
    char err[8192];
    int n = live_list(geteuid(), &pids, err, sizeof err);
    if (n < 0)
        return cli_fail("%s", err);
    int rc = EXIT_OK, sent = 0;
    for (int i = 0; i < n; i++) {
        if (pids[i] == getpid() || kill(pids[i], 0) != 0)
            continue;           /* a dead process's leftover: `hookit recover` */
        sent++;
        if (send_one(pids[i], name, cmd, timeout_ms) != EXIT_OK)
            rc = EXIT_FAIL;
    }
    free(pids);
    if (!sent)
        return cli_fail("no running profiled process of yours");
    return rc;
}
