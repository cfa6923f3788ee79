/*
 * The `hookit` subcommands: one line each, one file each (tools/cmd_NAME.c
 * defines `int cmd_NAME(int argc, char **argv)`, argv[0] being NAME).
 * To add a command, write tools/cmd_NAME.c and add one line here, in the
 * order `hookit --help` lists them.
 *
 *   HOOKIT_COMMAND(name, "one-line summary")
 */
HOOKIT_COMMAND(run,    "run a program with hookit preloaded (for programs not linked with it)")
HOOKIT_COMMAND(link,   "link a program with hookit built in (ld --wrap; also fully static programs)")
HOOKIT_COMMAND(report, "print each thread's call tree, or a flat profile, from profiles")
HOOKIT_COMMAND(export, "convert profiles to other formats (json, ...)")
HOOKIT_COMMAND(merge,  "combine profiles (a fork family, repeated runs) into one, with min/mean/max")
HOOKIT_COMMAND(diff,   "compare two profiles per function and per call path")
HOOKIT_COMMAND(top,      "watch a running profiled process: hottest functions, paths, stacks, calls/s")
HOOKIT_COMMAND(snapshot, "write a profile of a running process without stopping it")
HOOKIT_COMMAND(ctl,      "control a running process: start, stop, flush, reset, zerobase")
HOOKIT_COMMAND(recover,  "write the profile of a killed process from what it left behind")
HOOKIT_COMMAND(io,       "the I/O of runs: per-file table, contexts with the most I/O, --plot SVG chart")
HOOKIT_COMMAND(advise, "which functions' hooks cost the run most, and the compile flags that drop them")
