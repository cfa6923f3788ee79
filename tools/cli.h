/*
 * What every `hookit` subcommand shares: the command and format tables,
 * messages and exit codes, option-error handling, loading profiles, and
 * writing an output file atomically.
 */
#ifndef HOOKIT_TOOLS_CLI_H
#define HOOKIT_TOOLS_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/* Exit codes of every command. */
#define EXIT_OK     0
#define EXIT_FAIL   1           /* a failure, with a message on stderr */
#define EXIT_USAGE  2           /* a usage error, with a hint to --help */

#define HOOKIT_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
#include "tools/commands.h"
#undef HOOKIT_COMMAND

/* A profile given on the command line. */
struct loaded_profile {
    const char *path;
    struct profile *prof;
};

#define HOOKIT_FORMAT(name, summary) \
    int export_##name(FILE *out, struct loaded_profile *profiles, size_t n);
#include "tools/formats.h"
#undef HOOKIT_FORMAT

/* "hookit: MSG" on stderr; returns EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "hookit: CMD: MSG" and "Try 'hookit CMD --help'." on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usage error for what getopt_long returned ('?' or ':'), as above. */
int cli_option_error(const char *cmd, int c, char **argv);

/* getopt_long's state is global: call before parsing a command's options. */
void cli_reset_getopt(void);

/* Read every path into profiles[] (allocated).  On the first failure print
 * the reader's message and return -1 (everything freed). */
int cli_load_profiles(char **paths, size_t n, struct loaded_profile **out);
void cli_free_profiles(struct loaded_profile *profiles, size_t n);

/* Call write(out, ctx) on stdout (path NULL or "-") or on a new file that
 * replaces path atomically (temporary file in the same directory, then
 * rename).  Returns EXIT_OK or EXIT_FAIL (message printed). */
int cli_write_output(const char *path, int (*write)(FILE *out, void *ctx), void *ctx);

#endif
