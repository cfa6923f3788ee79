/*
 * A2N internals shared by the files of a2n/ (not installed).
 *
 *   struct a2n          one address space: its ranges, modules, objects
 *   struct a2n_range    one line of the maps, sorted by start
 *   struct a2n_module   one object file mapped at one load bias
 *   struct a2n_object   one object file (path + inode): ELF segments and
 *                       symbols, shared by every module that maps it
 */
#ifndef A2N_INTERNAL_H
#define A2N_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hookit/a2n.h"

#define A2N_API __attribute__((visibility("default")))

/* ---- strings.c: every string we hand out lives here until a2n_close ---- */
struct a2n_strings {
    char *chunk;                /* current chunk: [used, size) is free */
    size_t used, size;
    void **chunks;              /* all chunks, for freeing */
    size_t nchunks;
    const char **table;         /* open addressing set of interned strings */
    size_t table_size, count;
};

void a2n_strings_free(struct a2n_strings *s);
/* The interned copy of str (same pointer for equal contents); NULL on ENOMEM. */
const char *a2n_intern(struct a2n_strings *s, const char *str);
const char *a2n_internf(struct a2n_strings *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- elf.c: the PT_LOAD segments of an ELF image ---- */
struct a2n_segment {
    uint64_t vaddr, offset, filesz, memsz, align;
};

/* Reads n bytes at off into buf; returns the number of bytes read. */
typedef size_t (*a2n_read_fn)(void *ctx, void *buf, size_t n, uint64_t off);

/* Fills *segs (malloc'ed) with the PT_LOAD segments; returns their number,
 * or -1 if the image is not a readable ELF file. */
int a2n_elf_segments(a2n_read_fn read, void *ctx, struct a2n_segment **segs);
size_t a2n_read_fd(void *fd_as_ptr, void *buf, size_t n, uint64_t off);
struct a2n_mem { const char *data; size_t size; };
size_t a2n_read_mem(void *mem, void *buf, size_t n, uint64_t off);  /* mem: struct a2n_mem * */

/* ---- symbols.c ---- */
struct a2n_symbol {
    uint64_t addr, end;         /* link-time [addr, end) the symbol covers */
    void *bfd_sym;              /* asymbol * */
    const char *name;           /* display name, computed on first use */
    int rank;                   /* which alias to keep: higher wins */
};

struct a2n_object {
    struct a2n_object *next;
    char *path;                 /* path from the maps, " (deleted)" removed */
    uint64_t inode;
    char *open_path;            /* what we open to read it, or NULL */
    void *image;                /* in-memory image (the vdso), or NULL */
    size_t image_size;
    int image_owned;            /* image was malloc'ed (read from another pid) */

    int nsegs;                  /* -1: not an ELF file we could read */
    struct a2n_segment *segs;

    int sym_state;              /* 0 not loaded yet, 1 loaded, -1 failed */
    int lines_state;            /* 0 not looked at yet, 1 have DWARF, -1 none */
    int debug_tried;            /* looked for a separate debug file */
    void *main_bfd;             /* bfd * of the object itself */
    void *debug_bfd;            /* bfd * of its separate debug file, or NULL */
    void *abfd;                 /* bfd * the symbols come from (one of those) */
    void **bsyms;               /* asymbol ** of abfd */
    void *line_bfd;             /* bfd * with the DWARF, once lines_state == 1 */
    struct a2n_symbol *syms;
    size_t nsyms;
    const char *named_query;    /* a2n_symbols_names: the last name asked about */
    int named_answer;           /* and its answer */
};

/* Loads the symbols if not yet tried; then the symbol covering the
 * link-time address vaddr, or NULL. */
struct a2n_symbol *a2n_symbols_find(struct a2n_object *o, uint64_t vaddr);
const char *a2n_symbol_name(struct a2n_strings *strs, struct a2n_symbol *s);
/* file:line of vaddr from the debug info; 0 on success. */
int a2n_symbols_line(struct a2n_object *o, uint64_t vaddr,
                     const char **file, unsigned *line);
/* Whether the object's dynamic symbol table (its symbol table when it has
 * none: a static program) has name, defined or imported: 1 or 0.  The last
 * answer is kept (name compared by pointer). */
int a2n_symbols_names(struct a2n_object *o, const char *name);
void a2n_symbols_free(struct a2n_object *o);

/* ---- module.c ---- */
enum a2n_range_kind { A2N_RANGE_FILE, A2N_RANGE_ANON };

struct a2n_range {
    uint64_t start, end;
    enum a2n_range_kind kind;
    struct a2n_module *module;  /* FILE ranges */
    const char *label;          /* ANON ranges: "[anon]" or "[heap]"... */
};

struct a2n_span { uint64_t start, end; };

struct a2n_module {
    struct a2n_module *next;    /* newest first */
    struct a2n_object *object;
    const char *name;           /* base name (interned) */
    const char *path;           /* full path or "[vdso]" (interned) */
    uint64_t bias;
    int mapped;
    unsigned seen_generation;
    struct a2n_span *spans;     /* its mappings when last seen */
    size_t nspans, spans_cap;
};

struct a2n {
    pid_t pid;                  /* 0: this process */
    struct a2n_strings strings;
    struct a2n_object *objects;
    struct a2n_module *modules;
    struct a2n_range *ranges;   /* the mapped ranges, sorted */
    size_t nranges;
    size_t last_range;          /* cache: index of the last hit */
    unsigned generation;        /* incremented by every reload */
    uint64_t last_auto_reload_ns;
    int last_auto_reload_useless;
    struct a2n_perfmap *perfmap;    /* perfmap.c: JIT code names, read on first need */
};

int a2n_modules_load(struct a2n *a);   /* (re)read the maps */
void a2n_modules_free(struct a2n *a);
/* The mapped range containing addr, or NULL. */
struct a2n_range *a2n_range_find(struct a2n *a, uint64_t addr);
/* A module no longer mapped whose last mappings contained addr, or NULL. */
struct a2n_module *a2n_unmapped_find(struct a2n *a, uint64_t addr);

/* ---- vdso.c ---- */
/* The vdso image mapped at [start, end) in a->pid: *owned says whether it
 * must be freed.  NULL when it cannot be read. */
void *a2n_vdso_image(struct a2n *a, uint64_t start, uint64_t end, int *owned);

/* ---- perfmap.c ---- */
/* addr in JIT-compiled code named by /tmp/perf-PID.map: fills *out, 0; else -1. */
int a2n_perfmap_lookup(struct a2n *a, uint64_t addr, struct a2n_result *out);
void a2n_perfmap_free(struct a2n *a);

/* ---- maps.c ---- */
/* Calls fn for every well-formed line of /proc/PID/maps; 0 or -1 (errno). */
int a2n_read_maps(pid_t pid, int (*fn)(void *ctx, const struct a2n_map *m), void *ctx);

/* ---- loaded.c ---- */
/* The same for this process without /proc: one line per PT_LOAD segment of
 * every object the dynamic loader knows. */
int a2n_read_loaded_objects(int (*fn)(void *ctx, const struct a2n_map *m), void *ctx);
/* While path is set (non-NULL), a2n_read_maps reads it instead (a2n_open_maps). */
void a2n_maps_override(const char *path);

#endif
