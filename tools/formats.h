/*
 * Export formats of `hookit export --format=NAME`: one line each, one file
 * each (tools/fmt_NAME.c defines the function below).  To add a format,
 * write tools/fmt_NAME.c and add one line here.
 *
 *   HOOKIT_FORMAT(name, "one-line summary")
 *
 * defines
 *   int export_NAME(FILE *out, struct loaded_profile *profiles, size_t n);
 * which writes the n profiles to out and returns 0, or prints a message
 * (hookit: ...) and returns -1.
 */
HOOKIT_FORMAT(json, "the stable JSON schema of docs/json-schema.md")
HOOKIT_FORMAT(callgrind, "callgrind format for KCachegrind/QCachegrind and callgrind_annotate")
HOOKIT_FORMAT(folded, "folded stacks (main;a;b 1234) for flamegraph.pl and speedscope")
HOOKIT_FORMAT(svg, "a self-contained interactive flame graph (SVG)")
HOOKIT_FORMAT(chrome, "Chrome trace event JSON for Perfetto (from a .trace)")
HOOKIT_FORMAT(pprof, "gzipped profile.proto for go tool pprof, speedscope, Pyroscope")
