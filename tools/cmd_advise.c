/*
 * hookit advise PROFILE: which functions' hooks cost the run most, what
 * the run would cost without them, and as the last line the compile flags
 * that leave them uninstrumented (docs/cost.md; tools/advise.h).
 */
#include "tools/advise.h"
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/srclines.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *const advise_usage =
    "usage: hookit advise [--clang] [--target PCT] [--keep-top N] [--show N] PROFILE\n"
    "\n"
    "From one profile: the functions whose hooks cost the run most (their calls\n"
    "times the per-call cost the profile measured, and the share of the run each\n"
    "accounts for), what the hooks would cost without them, and as the last line\n"
    "the compile flags that leave them uninstrumented, ready to add to CFLAGS:\n"
    "GCC's -finstrument-functions-exclude-file-list= (headers) and\n"
    "-finstrument-functions-exclude-function-list= (the rest).  GCC matches their\n"
    "entries as substrings: a name or file that would also match a function that\n"
    "stays instrumented is not written (the function is listed with the reason).\n"
    "The functions on the paths to the run's top calling contexts by inclusive\n"
    "time are never dropped.\n"
    "\n"
    "Options:\n"
    "      --clang          Clang's flags instead (-finstrument-functions-after-\n"
    "                       inlining; Clang 14 has no exclude lists)\n"
    "      --target PCT     drop functions, most costly first, until the hooks\n"
    "                       are estimated at PCT%% of the program's own time or\n"
    "                       less (default 5)\n"
    "      --keep-top N     the calling contexts whose paths are kept (default 10)\n"
    "      --show N         the costliest functions listed, besides every one\n"
    "                       dropped (default 20)\n"
    "  -h, --help           this help\n"
    "\n"
    "See docs/cost.md (\"Keeping the cost down\").\n";

struct advise_cli {
    int clang;
    struct advise_opts opts;
    long show;
};

static void print_action(const struct advise_fn *f)
{
    char act[64];
    if (f->how == ADVISE_BY_FILE)
        snprintf(act, sizeof act, "drop: file %.40s", f->token);
    else if (f->how == ADVISE_BY_NAME && strcmp(f->token, f->key) != 0)
        snprintf(act, sizeof act, "drop: by %.30s", f->token);
    else if (f->how == ADVISE_BY_NAME)
        snprintf(act, sizeof act, "drop: name");
    else if (f->on_top_path)
        snprintf(act, sizeof act, "keep: top path");
    else if (f->why_not)
        snprintf(act, sizeof act, "keep: no flag can");
    else
        act[0] = '\0';
    printf("  %-24s", act);
}

static void print_row(const struct advise *a, const struct advise_fn *f)
{
    char cost[32];
    printf("%14llu  %10s  %5.1f%%", (unsigned long long)f->calls, cost_fmt_ns(f->cost_ns, cost, sizeof cost),
           a->run.run_ns > 0 ? 100 * f->cost_ns / a->run.run_ns : 0);
    print_action(f);
    printf("  %s", f->name);
    if (f->file)
        printf("  (%s)", advise_file_token(f->file));
    if (f->how == ADVISE_KEEP && f->why_not)
        printf("  [%s %s]", f->why_not, f->clash ? f->clash : "");
    putchar('\n');
}

static void print_table(const struct advise *a, long show)
{
    char per[32];
    printf("The functions whose hooks cost the run most (calls x %s; share of the run):\n",
           cost_fmt_ns(a->run.ns_per_call, per, sizeof per));
    printf("%14s  %10s  %6s  %-24s  %s\n", "CALLS", "COST", "SHARE", "ACTION", "FUNCTION");
    for (size_t i = 0; i < a->nfns; i++)
        if ((long)i < show || a->fns[i].how != ADVISE_KEEP)
            print_row(a, &a->fns[i]);
}

static void print_summary(const char *path, const struct advise *a)
{
    char cost[32], run[32], left[32], own[32], fixed[32], samp[32], all[32];
    double program = a->run.run_ns - a->run.cost_ns;
    if (program <= 0)
        program = 1;
    printf("%s: %llu calls; the hooks took about %s of the run's %s of %s (%.0f%%), the run %.2fx "
           "the program's own time\n",
           path, (unsigned long long)a->run.calls, cost_fmt_ns(a->run.cost_ns, cost, sizeof cost),
           cost_fmt_ns(a->run.run_ns, run, sizeof run), a->run.sampled ? "CPU" : "time",
           100 * cost_share(&a->run), a->run.run_ns / program);
    printf("Kept: the functions on the paths to the %u calling contexts with the most inclusive time.\n",
           a->top_contexts);
    printf("Expected without the %zu dropped: %llu calls; the hooks about %s (%.0f%% of the run's %s), "
           "the run %.2fx the program's own time (%s of it)\n",
           a->ndropped, (unsigned long long)a->calls_left, cost_fmt_ns(a->left_ns, left, sizeof left),
           100 * a->left_ns / (program + a->left_ns), cost_fmt_ns(program + a->left_ns, run, sizeof run),
           (program + a->left_ns) / program, cost_fmt_ns(program, own, sizeof own));
    double sampling = cost_sampling_ns(&a->run, program + a->left_ns);
    printf("Besides: about %s to start and write the profile, and %s for the sampler's signals; in all "
           "about %s over the program's own time, the run %.2fx it\n",
           cost_fmt_ns(a->run.fixed_ns, fixed, sizeof fixed), cost_fmt_ns(sampling, samp, sizeof samp),
           cost_fmt_ns(a->left_ns + a->run.fixed_ns + sampling, all, sizeof all),
           (program + a->left_ns + a->run.fixed_ns + sampling) / program);
}

/* Clang 14 has -finstrument-functions-after-inlining and nothing to name
 * functions or files: what it does instead, then its flag. */
static void print_clang(const struct advise *a)
{
    printf("Clang: -finstrument-functions-exclude-function-list and -exclude-file-list are GCC's "
           "(Clang 14 refuses them; its -fprofile-list is for -fprofile-instr-generate, not these "
           "hooks).  Clang offers -finstrument-functions-after-inlining, in place of "
           "-finstrument-functions: hooks only in the functions that stay out of line after "
           "inlining, so every inlined copy (the tiny accessors above, most often) costs nothing "
           "and is not counted.  The %zu marked drop above are what GCC's lists would name; those "
           "that Clang keeps out of line: mark them __attribute__((no_instrument_function)).  A "
           "function on a kept path that Clang inlines leaves the tree too: mark it "
           "__attribute__((noinline)) to keep it.\n",
           a->ndropped);
    printf("-finstrument-functions-after-inlining\n");
}

static int parse_number(const char *opt, const char *arg, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(arg, &end);
    if (errno || end == arg || *end || !(*out >= lo && *out <= hi))
        return cli_usage_error("advise", "%s needs a number from %g to %g, not '%s'", opt, lo, hi, arg);
    return 0;
}

static int parse_args(int argc, char **argv, struct advise_cli *c)
{
    enum { OPT_CLANG = 256, OPT_TARGET, OPT_KEEP_TOP, OPT_SHOW };
    static const struct option opts[] = {
        { "clang", no_argument, NULL, OPT_CLANG },
        { "target", required_argument, NULL, OPT_TARGET },
        { "keep-top", required_argument, NULL, OPT_KEEP_TOP },
        { "show", required_argument, NULL, OPT_SHOW },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    double v;
    int opt;
    /* 5%: the program's own time in a profiled run holds the hooks' shadow
     * (zstd's: 3.5 times its plain build's CPU), and a loaded machine
     * inflates it more; at 10% zstd came out at 1.44x plain on a machine
     * loaded 7 deep and 1.80x on one loaded 15 deep (docs/cost.md) */
    c->opts.target_pct = 5;
    c->opts.top_contexts = 10;
    c->show = 20;
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (opt) {
        case OPT_CLANG:
            c->clang = 1;
            break;
        case OPT_TARGET:
            if (parse_number("--target", optarg, 0, 1000, &v))
                return EXIT_USAGE;
            c->opts.target_pct = v;
            break;
        case OPT_KEEP_TOP:
            if (parse_number("--keep-top", optarg, 0, 1000000, &v))
                return EXIT_USAGE;
            c->opts.top_contexts = (uint32_t)v;
            break;
        case OPT_SHOW:
            if (parse_number("--show", optarg, 0, 1e9, &v))
                return EXIT_USAGE;
            c->show = (long)v;
            break;
        case 'h':
            fputs(advise_usage, stdout);
            return -1;
        default:
            return cli_option_error("advise", opt, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("advise", "give one profile (hookit.*.prof)");
    return 0;
}

int cmd_advise(int argc, char **argv)
{
    struct advise_cli c = { 0 };
    int rc = parse_args(argc, argv, &c);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    struct loaded_profile *ps;
    if (cli_load_profiles(argv + optind, 1, &ps) < 0)
        return EXIT_FAIL;
    /* the source files, for GCC's file list: read from the binary, which
     * must still be the one that ran */
    if (srclines_fill(ps[0].prof, "advise", ps[0].path) < 0) {
        cli_free_profiles(ps, 1);
        return cli_fail("out of memory");
    }
    struct advise a;
    rc = advise_collect(ps[0].prof, &c.opts, &a);
    if (rc == -1)
        rc = cli_fail("advise: %s has no measured per-call cost (a profile of libjprof with "
                      "timer=sample or timer=exact, not merged, with calls)",
                      ps[0].path);
    else if (rc < 0 || advise_choose(&a) != 0)
        rc = cli_fail("out of memory");
    if (rc) {
        cli_free_profiles(ps, 1);
        return rc;
    }
    names_use_profile(ps[0].prof);
    print_summary(ps[0].path, &a);
    print_table(&a, c.show);
    if (c.clang)
        print_clang(&a);
    else if (!advise_gcc_flags(stdout, &a))
        printf(
            a.run.cost_ns <= a.target_ns
                ? "Nothing to drop: the hooks cost less than the target, %.0f%% of the program's own time.\n"
                : "Nothing can be dropped: the costly functions are on the kept paths or no flag can name "
                  "them (above); the target was %.0f%% of the program's own time (fewer paths kept: "
                  "--keep-top N).\n",
            c.opts.target_pct);
    advise_free(&a);
    names_use_profile(NULL);
    cli_free_profiles(ps, 1);
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail("error writing standard output: %s", strerror(errno));
    return EXIT_OK;
}
