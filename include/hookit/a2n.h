/*
 * A2N: address to name.
 *
 * A process is a list of modules (from /proc/PID/maps); a module is an object
 * file mapped at a load bias; its symbols come from libbfd (.symtab, else
 * .dynsym), are loaded the first time an address in it is looked up, and are
 * searched by binary search.  C++ names are demangled.
 *
 * Modules that disappear from the maps on a reload are kept (marked unmapped)
 * so addresses recorded while they were mapped still resolve; a lookup
 * prefers a module that is mapped now.
 *
 * Fallback names, so every address gets a name:
 *   vdso:       module "[vdso]",    function "[vdso]+0xOFF" (or the vdso symbol)
 *   anonymous:  module "[anon]",    function "[anon]+0xADDR"; but JIT-compiled
 *               code named in /tmp/perf-PID.map (perf's format, written by
 *               hookit's JVMTI agent and other JIT runtimes): module "[jit]",
 *               the name from the map (A2N_FOUND_SYMBOL)
 *   no module:  module "[unknown]", function "0xADDR"
 *   in a module but no symbol covers it: function "MODULE+0xOFF"
 *
 * Not thread-safe: one caller at a time per struct a2n.
 */
#ifndef HOOKIT_A2N_H
#define HOOKIT_A2N_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct a2n;

/* One mapping line of /proc/PID/maps. */
struct a2n_map {
    uint64_t start, end, file_offset;
    char perms[5];              /* "r-xp" */
    uint64_t inode;
    char path[4096];            /* "" for anonymous */
};

/* Parse one line of /proc/PID/maps (without or with its newline).
 * Returns 0 on success, -1 if the line is malformed. */
int a2n_parse_maps_line(const char *line, struct a2n_map *out);

/* Open the address space of pid (0 = this process) and read its maps.
 * Returns NULL with errno set on failure. */
struct a2n *a2n_open(pid_t pid);
void a2n_close(struct a2n *a2n);

/* A process that has ended, from a saved copy of its /proc/PID/maps
 * (`hookit recover`).  Objects are read from the paths in the copy. */
struct a2n *a2n_open_maps(const char *maps_path);

/* Re-read the maps: new modules are added, vanished ones are kept as
 * unmapped.  Called by the lifecycle layer after dlopen/dlclose.
 * A failed lookup also triggers one reload.  Returns 0 or -1. */
int a2n_reload(struct a2n *a2n);

#define A2N_FOUND_MODULE   0x1  /* the address is inside a known module */
#define A2N_FOUND_SYMBOL   0x2  /* a symbol covers it */
#define A2N_FOUND_LINE     0x4  /* file and line are known (debug info) */

struct a2n_result {
    int flags;                  /* A2N_FOUND_* */
    const char *module;         /* base name: "libc.so.6", "app", "[vdso]" */
    const char *module_path;    /* full path, or the bracketed name */
    const char *function;       /* demangled name, or a fallback (see above) */
    const char *file;           /* source file, or NULL */
    unsigned line;              /* source line, or 0 */
    uint64_t symbol_addr;       /* run-time address of the symbol's start, or 0 */
    uint64_t module_offset;     /* address - module load bias */
};

/* Resolve addr.  The strings stay valid until a2n_close.  want_lines asks
 * for file:line (slower: reads DWARF).  Always fills *out; returns 0 when a
 * symbol was found, -1 when only a fallback name could be given. */
int a2n_lookup(struct a2n *a2n, uint64_t addr, int want_lines, struct a2n_result *out);

/* An object file on disk, with no process: `hookit export` finds a
 * profiled function in its binary by the name a2n_lookup gave it, since a
 * profile keeps no load addresses.  NULL (errno set) when path is not an
 * object file with function symbols. */
struct a2n_file;
struct a2n_file *a2n_file_open(const char *path);
void a2n_file_close(struct a2n_file *f);
/* The link-time addresses of the functions named name (as a2n_lookup names
 * them: demangled, the preferred alias of each address), up to max of
 * them in addrs, in address order; returns how many there are. */
size_t a2n_file_find(struct a2n_file *f, const char *name, uint64_t *addrs, size_t max);
/* file:line of the link-time address vaddr from the debug info: 0, or -1
 * when there is none.  The strings stay valid until a2n_file_close. */
int a2n_file_line(struct a2n_file *f, uint64_t vaddr, const char **file, unsigned *line);

/* The GNU build-id (the NT_GNU_BUILD_ID note) as lowercase hex, NUL-
 * terminated, in hex (size bytes; 41 hold a 160-bit SHA-1 id).  Of the
 * object loaded in this process that holds addr (read from its program
 * headers in memory, no file opened), or of the object file at path (its
 * program headers on disk).  0, or -1 when there is none. */
int a2n_build_id_loaded(uint64_t addr, char *hex, size_t size);
int a2n_build_id_file(const char *path, char *hex, size_t size);
#define A2N_BUILD_ID_MAX 129 /* hex of the longest id accepted, and its NUL */

/* Whether the object file holding addr has symbol in its dynamic symbol
 * table, defined or imported (in its symbol table when it has no dynamic
 * one: a static program).  1 or 0; -1 when addr is in no module.  A
 * profiler asks for "__cyg_profile_func_enter": a module without it is not
 * instrumented, so its functions were seen through copies inlined into
 * other modules.  The last answer per object is kept: pass the same
 * string (pointer) to ask again cheaply. */
int a2n_module_names(struct a2n *a, uint64_t addr, const char *symbol);

/* Demangle a C++ symbol name; returns a malloc'ed string, or NULL when
 * name is not a mangled name. */
char *a2n_demangle(const char *name);

#ifdef __cplusplus
}
#endif
#endif
