/*
 * hookit export: convert profiles to another format.  The formats are
 * listed in tools/formats.h, one file each (tools/fmt_NAME.c).
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/find_fn.h"
#include "tools/fold.h"
#include "tools/names.h"
#include "tools/progress.h"
#include "tools/srclines.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct format {
    const char *name;
    int (*write)(FILE *out, struct loaded_profile *profiles, size_t n);
    const char *summary;
};

static const struct format formats[] = {
#define HOOKIT_FORMAT(name, summary) { #name, export_##name, summary },
#include "tools/formats.h"
#undef HOOKIT_FORMAT
};

#define NFORMATS (sizeof formats / sizeof formats[0])

static void export_usage(FILE *f)
{
    fprintf(f,
            "usage: hookit export --format=FORMAT [-o FILE] PROFILE...\n"
            "\n"
            "Write the profiles in another format, to standard output or to FILE\n"
            "(replaced atomically).\n"
            "\n"
            "Options:\n"
            "  -f, --format FORMAT   the output format (required):\n");
    for (size_t i = 0; i < NFORMATS; i++)
        fprintf(f, "        %-12s %s\n", formats[i].name, formats[i].summary);
    fprintf(f,
            "  -o, --output FILE     write to FILE instead of standard output\n"
            "  -t, --thread T        only the thread with kernel thread id T, or the threads\n"
            "                        named T (a glob: 'worker*')\n"
            "  -m, --merge-threads   one tree for all threads (matched by call path)\n"
            "  -w, --weight W        folded/svg: weigh stacks by time (exclusive ns,\n"
            "                        the default), cpu (time on the CPU), wait (time\n"
            "                        in blocking calls) or calls; pprof: the sample type\n"
            "                        shown first (self_time, cpu, wait or calls)\n"
            "      --no-lines        callgrind/pprof: no source lines (by default they are\n"
            "                        read from the program's binary when it is still the one\n"
            "                        that ran; a profile made with JPROFOPTS=lines has its own)\n"
            "      --fold-frames PATTERN  fold the frames of functions whose name (simple\n"
            "                        form) matches the glob into their callers, besides the\n"
            "                        default list (std::thread's and std::__invoke's\n"
            "                        wrappers); --no-fold-frames: none, as recorded\n"
            "      --as-compiled     inlined copies folded into the functions they were\n"
            "                        inlined into, as in hookit report\n"
            "      --nested          json: each node's children inside it (\"roots\" and\n"
            "                        \"children\") instead of the flat \"nodes\" table\n"
            "      --demangle=MODE   full (the default, for the tools that read exports):\n"
            "                        names as demangled, static initialisers as 'global\n"
            "                        constructors keyed to X'; simple: the short names\n"
            "                        hookit report shows (for flame graphs); no: names as\n"
            "                        the profile stores them (_GLOBAL__sub_I_X)\n"
            "An export that takes over 1 s shows its progress on stderr when that is a\n"
            "terminal.\n"
            "chrome (a timeline can be large; hookit estimates its size first and warns\n"
            "above 200 MB):\n"
            "      --min-time T      leave out calls shorter than T (e.g. 10us, 1ms)\n"
            "      --depth N         leave out calls deeper than N levels\n"
            "      --from T, --to T  only calls that overlap [T, T] since the process start\n"
            "Several profiles are merged by call path (threads matched by index), except\n"
            "for json (one document each) and chrome (one timeline).\n"
            "  -h, --help            this help\n");
}

static void format_list(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NFORMATS && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", formats[i].name);
}

struct export_job {
    const struct format *fmt;
    struct loaded_profile *profiles;
    size_t n;
};

/* A long export shows its progress on a terminal: the timeline (chrome)
 * counts its calls itself, the others the bytes they write (progress.c). */
static int run_job(FILE *out, void *ctx)
{
    struct export_job *job = ctx;
    struct progress *pg = strcmp(job->fmt->name, "chrome") ? progress_start(out, job->fmt->name) : NULL;
    int rc = job->fmt->write(pg ? progress_stream(pg) : out, job->profiles, job->n);
    if (pg && progress_end(pg) < 0 && rc == 0)
        rc = -1;
    return rc;
}

int cmd_export(int argc, char **argv)
{
    /* one option a line (clang-format would pack the table) */
    /* clang-format off */
    static const struct option opts[] = {
        { "format", required_argument, NULL, 'f' },
        { "output", required_argument, NULL, 'o' },
        { "thread", required_argument, NULL, 't' },
        { "merge-threads", no_argument, NULL, 'm' },
        { "weight", required_argument, NULL, 'w' },
        { "nested", no_argument, NULL, 'N' },
        { "no-lines", no_argument, NULL, 'L' },
        { "min-time", required_argument, NULL, 'T' },
        { "depth", required_argument, NULL, 'D' },
        { "from", required_argument, NULL, 'F' },
        { "to", required_argument, NULL, 'U' },
        { "demangle", required_argument, NULL, 'M' },
        { "fold-frames", required_argument, NULL, 'R' },
        { "no-fold-frames", no_argument, NULL, 'r' },
        { "as-compiled", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    /* clang-format on */
    const char *format = NULL, *output = NULL;
    int c, lines = 1, simple = 0;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":f:o:t:mw:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 't':
            if (!*optarg)
                return cli_usage_error("export", "--thread needs a thread id or a thread name");
            find_thread_parse(optarg, &export_options.tid, &export_options.thread_name);
            export_options.has_tid = 1;
            break;
        case 'm':
            export_options.merge_threads = 1;
            break;
        case 'w':
            if (weight_parse(optarg, &export_options.weight) != 0)
                return cli_usage_error("export", "--weight is time, cpu, wait or calls, not '%s'", optarg);
            break;
        case 'N':
            export_options.json_nested = 1;
            break;
        case 'M': /* full by default: tools read the exports; simple on request */
            if (names_parse_demangle(optarg) != 0)
                return cli_usage_error("export", "--demangle is full, simple or no, not '%s'", optarg);
            simple = !strcmp(optarg, "simple");
            break;
        case 'L':
            lines = 0;
            break;
        case 'R':
            if (fold_frames_add(optarg) != 0)
                return cli_usage_error("export", "too many --fold-frames");
            break;
        case 'r':
            fold_frames_off();
            break;
        case 'C':
            fold_frames_as_compiled();
            break;
        case 'T':
        case 'F':
        case 'U': {
            uint64_t *dst = c == 'T' ? &export_options.min_time_ns :
                            c == 'F' ? &export_options.from_ns : &export_options.to_ns;
            if (export_parse_ns(optarg, dst) != 0)
                return cli_usage_error("export", "--%s needs a time (a number with ns, us, ms "
                                       "or s), not '%s'", c == 'T' ? "min-time" :
                                       c == 'F' ? "from" : "to", optarg);
            break;
        }
        case 'D': {
            char *end;
            errno = 0;
            long d = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || d < 1 || d > INT32_MAX)
                return cli_usage_error("export", "--depth needs a number of levels (1 or more), "
                                       "not '%s'", optarg);
            export_options.max_depth = (uint32_t)d;
            break;
        }
        case 'h':
            export_usage(stdout);
            return EXIT_OK;
        default:
            return cli_option_error("export", c, argv);
        }
    }
    char list[512];
    format_list(list, sizeof list);
    if (!format)
        return cli_usage_error("export", "--format is required (one of: %s)", list);
    struct export_job job = { 0 };
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(formats[i].name, format) == 0)
            job.fmt = &formats[i];
    if (!job.fmt)
        return cli_usage_error("export", "unknown format '%s' (valid formats: %s)", format, list);
    if (optind >= argc)
        return cli_usage_error("export", "no profile given");

    job.n = (size_t)(argc - optind);
    if (cli_load_profiles(argv + optind, job.n, &job.profiles) < 0)
        return EXIT_FAIL;
    for (size_t i = 0; i < job.n; i++)
        if (names_read_static_initializers(job.profiles[i].prof) < 0) {
            cli_free_profiles(job.profiles, job.n);
            return cli_fail("out of memory");
        }
    /* The viewers of these formats show source (KCachegrind, pprof -list). */
    lines = lines && (!strcmp(job.fmt->name, "callgrind") || !strcmp(job.fmt->name, "pprof"));
    for (size_t i = 0; i < job.n && lines; i++)
        if (srclines_fill(job.profiles[i].prof, "export", job.profiles[i].path) < 0) {
            cli_free_profiles(job.profiles, job.n);
            return cli_fail("out of memory");
        }
    /* --demangle=simple: the names hookit report shows (after the source
     * lines, which are found by the full names) */
    for (size_t i = 0; i < job.n && simple; i++)
        if (names_apply_display(job.profiles[i].prof) < 0) {
            cli_free_profiles(job.profiles, job.n);
            return cli_fail("out of memory");
        }
    if (export_apply_options(job.profiles, job.n) < 0) {
        cli_free_profiles(job.profiles, job.n);
        return EXIT_FAIL;
    }
    int rc = cli_write_output(output, run_job, &job);
    cli_free_profiles(job.profiles, job.n);
    return rc;
}
