/*
 * hookit: the command line front end.  `hookit COMMAND [ARGS...]` runs the
 * subcommand listed in tools/commands.h (one file each, tools/cmd_NAME.c).
 */
#include "tools/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
#define HOOKIT_COMMAND(name, summary) { #name, cmd_##name, summary },
#include "tools/commands.h"
#undef HOOKIT_COMMAND
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hookit [--help] [--version] COMMAND [ARGS...]\n"
            "\n"
            "hookit reads and produces call-flow profiles of programs built with\n"
            "-finstrument-functions.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "'hookit COMMAND --help' describes a command.  Exit status: 0 ok,\n"
            "1 failure, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { 0, 0, 0, 0 },
    };
    int c;
    cli_reset_getopt();
    /* "+": stop at the command name; its options are its own. */
    while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 'V':
            printf("hookit %s\n", HOOKIT_VERSION);
            return EXIT_OK;
        default:
            return cli_option_error(NULL, c, argv);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hookit: missing command\n");
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].run(argc - optind, argv + optind);
    if (strcmp(name, "help") == 0) {
        /* hookit help CMD is hookit CMD --help */
        const char *cmd = optind + 1 < argc ? argv[optind + 1] : NULL;
        /* hookit help help (or --help): the list of commands, as hookit --help */
        if (cmd && strcmp(cmd, "help") && strcmp(cmd, "--help") && strcmp(cmd, "-h")) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(commands[i].name, cmd) == 0) {
                    char *args[] = { (char *)cmd, (char *)"--help", NULL };
                    return commands[i].run(2, args);
                }
            fprintf(stderr, "hookit: help: unknown command '%s'\nTry 'hookit --help'.\n", cmd);
            return EXIT_USAGE;
        }
        usage(stdout);
        return EXIT_OK;
    }
    fprintf(stderr, "hookit: unknown command '%s'\nTry 'hookit --help'.\n", name);
    return EXIT_USAGE;
}
