/*
 * The function symbols of an object file, through libbfd.
 *
 * Loaded the first time an address in the object is looked up: .symtab
 * (which names static functions too, what dladdr cannot), else the
 * .symtab of a separate debug file (build-id or .gnu_debuglink), else
 * .dynsym (stripped objects: exported functions only).  Kept sorted by
 * address, one entry per address, for binary search.  A symbol covers
 * [value, value + st_size); when the size is unknown, up to the next
 * symbol or the end of its section.  DWARF is only read for file:line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bfd.h>

#include "a2n/a2n_internal.h"

#define DEBUG_DIR "/usr/lib/debug"

/* libbfd's elf_symbol_type (elf-bfd.h, not installed): the canonical ELF
 * symbol starts with the asymbol and goes on with the raw ELF symbol.
 * Only st_value and st_size are read, and only after checking that
 * st_value agrees with the asymbol (so a layout change is noticed and
 * sizes are then computed from the next symbol instead). */
struct elf_symbol_mirror {
    asymbol symbol;
    struct {
        bfd_vma st_value;
        bfd_vma st_size;
        unsigned long st_name;
        unsigned char st_info, st_other, st_target_internal;
        unsigned int st_shndx;
    } internal_elf_sym;
};

static void quiet_bfd_errors(const char *fmt, va_list ap)
{
    (void)fmt;
    (void)ap;
}

/* libbfd would print warnings about odd files on the profiled program's
 * stderr; a missing symbol shows as a fallback name instead.  The handler
 * is libbfd's global state, and the program may use libbfd itself, so it
 * is only ours while we are in libbfd. */
static bfd_error_handler_type quiet_begin(void)
{
    static int initialized;
    if (!initialized) {
        initialized = 1;
        bfd_init();
    }
    return bfd_set_error_handler(quiet_bfd_errors);
}

static void quiet_end(bfd_error_handler_type previous)
{
    bfd_set_error_handler(previous);
}

/* ---- opening ------------------------------------------------------------ */

static void *mem_open(struct bfd *abfd, void *closure)
{
    (void)abfd;
    return closure;
}

static file_ptr mem_pread(struct bfd *abfd, void *stream, void *buf, file_ptr n, file_ptr off)
{
    (void)abfd;
    const struct a2n_object *o = stream;
    struct a2n_mem mem = { o->image, o->image_size };
    if (n < 0 || off < 0)
        return -1;
    return (file_ptr)a2n_read_mem(&mem, buf, (size_t)n, (uint64_t)off);
}

static int mem_close(struct bfd *abfd, void *stream)
{
    (void)abfd;
    (void)stream;
    return 0;
}

static int mem_stat(struct bfd *abfd, void *stream, struct stat *st)
{
    (void)abfd;
    const struct a2n_object *o = stream;
    memset(st, 0, sizeof *st);
    st->st_size = (off_t)o->image_size;
    st->st_mode = S_IFREG | 0444;
    return 0;
}

static bfd *open_bfd_file(const char *path)
{
    bfd *abfd = bfd_openr(path, NULL);
    if (!abfd)
        return NULL;
    if (!bfd_check_format(abfd, bfd_object)) {
        bfd_close(abfd);
        return NULL;
    }
    return abfd;
}

static bfd *open_object(struct a2n_object *o)
{
    if (!o->image)
        return o->open_path ? open_bfd_file(o->open_path) : NULL;
    bfd *abfd = bfd_openr_iovec(o->path, NULL, mem_open, o, mem_pread, mem_close, mem_stat);
    if (abfd && !bfd_check_format(abfd, bfd_object)) {
        bfd_close(abfd);
        abfd = NULL;
    }
    return abfd;
}

/* ---- reading symbols ------------------------------------------------------ */

static long read_symtab(bfd *abfd, int dynamic, asymbol ***out)
{
    *out = NULL;
    if (!dynamic && !(bfd_get_file_flags(abfd) & HAS_SYMS))
        return 0;
    long bound = dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd)
                         : bfd_get_symtab_upper_bound(abfd);
    if (bound <= 0)
        return 0;
    asymbol **syms = malloc((size_t)bound);
    if (!syms)
        return 0;
    long n = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, syms)
                     : bfd_canonicalize_symtab(abfd, syms);
    if (n <= 0) {
        free(syms);
        return 0;
    }
    *out = syms;
    return n;
}

static uint64_t elf_size(bfd *abfd, asymbol *s)
{
    if (bfd_get_flavour(abfd) != bfd_target_elf_flavour)
        return 0;
    const struct elf_symbol_mirror *e = (const struct elf_symbol_mirror *)s;
    if (e->internal_elf_sym.st_value != bfd_asymbol_value(s))
        return 0;
    return e->internal_elf_sym.st_size;
}

static int is_function(const asymbol *s)
{
    /* An IFUNC symbol names its resolver, a function too. */
    if (!(s->flags & (BSF_FUNCTION | BSF_GNU_INDIRECT_FUNCTION))
        || (s->flags & (BSF_SECTION_SYM | BSF_FILE)))
        return 0;
    const asection *sec = s->section;
    return sec && !bfd_is_und_section(sec) && !bfd_is_com_section(sec)
           && !bfd_is_abs_section(sec);
}

/* Of several names for one address keep the one a user wrote: fewer
 * leading underscores first (getpid before __getpid, malloc before
 * __libc_malloc), then global before weak before local. */
static int rank_of(const asymbol *s)
{
    int binding = (s->flags & BSF_GLOBAL) ? 3 : (s->flags & BSF_WEAK) ? 2 : 1;
    const char *name = bfd_asymbol_name(s);
    int underscores = 0;
    while (underscores < 3 && name[underscores] == '_')
        underscores++;
    return (3 - underscores) * 4 + binding;
}

static size_t collect_functions(bfd *abfd, asymbol **syms, long n, struct a2n_symbol **out)
{
    size_t count = 0;
    *out = NULL;
    for (long i = 0; i < n; i++)
        count += is_function(syms[i]);
    if (!count)
        return 0;
    struct a2n_symbol *v = calloc(count, sizeof *v);
    if (!v)
        return 0;
    size_t k = 0;
    for (long i = 0; i < n; i++) {
        asymbol *s = syms[i];
        if (!is_function(s))
            continue;
        uint64_t addr = bfd_asymbol_value(s), size = elf_size(abfd, s);
        v[k].addr = addr;
        v[k].end = size ? addr + size : 0;
        v[k].bfd_sym = s;
        v[k].rank = rank_of(s);
        k++;
    }
    *out = v;
    return k;
}

static int by_addr_then_rank(const void *x, const void *y)
{
    const struct a2n_symbol *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    return strcmp(bfd_asymbol_name((asymbol *)a->bfd_sym), bfd_asymbol_name((asymbol *)b->bfd_sym));
}

static uint64_t section_end(const asymbol *s)
{
    const asection *sec = s->section;
    return bfd_section_vma(sec) + bfd_section_size(sec);
}

/* Sorts, keeps the best-ranked name per address (with the largest known
 * size among its aliases) and fills in unknown ends. */
static size_t finish_table(struct a2n_symbol *v, size_t n)
{
    qsort(v, n, sizeof *v, by_addr_then_rank);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].addr == v[i].addr) {
            if (v[i].end > v[k - 1].end)
                v[k - 1].end = v[i].end;
            continue;
        }
        v[k++] = v[i];
    }
    for (size_t i = 0; i < k; i++) {
        if (v[i].end > v[i].addr)
            continue;
        uint64_t end = section_end(v[i].bfd_sym);
        if (i + 1 < k && v[i + 1].addr < end)
            end = v[i + 1].addr;
        v[i].end = end > v[i].addr ? end : v[i].addr + 1;
    }
    return k;
}

/* A stripped object's full symbol table may be in a separate debug file. */
static bfd *open_debug_file(bfd *abfd)
{
    char *path = bfd_follow_build_id_debuglink(abfd, DEBUG_DIR);
    if (!path)
        path = bfd_follow_gnu_debuglink(abfd, DEBUG_DIR);
    if (!path)
        return NULL;
    bfd *dbg = open_bfd_file(path);
    free(path);
    return dbg;
}

static int try_table(struct a2n_object *o, bfd *abfd, int dynamic)
{
    asymbol **syms;
    long n = read_symtab(abfd, dynamic, &syms);
    struct a2n_symbol *v;
    size_t count = collect_functions(abfd, syms, n, &v);
    if (!count) {
        free(syms);
        return 0;
    }
    o->syms = v;
    o->nsyms = finish_table(v, count);
    o->abfd = abfd;
    o->bsyms = (void **)syms;
    return 1;
}

static bfd *debug_file(struct a2n_object *o)
{
    if (!o->debug_tried && o->main_bfd && !o->image) {
        o->debug_tried = 1;
        o->debug_bfd = open_debug_file(o->main_bfd);
    }
    return o->debug_bfd;
}

static void load_symbols(struct a2n_object *o)
{
    o->sym_state = -1;
    bfd *abfd = open_object(o);
    if (!abfd)
        return;
    o->main_bfd = abfd;
    if (!try_table(o, abfd, 0)) {
        bfd *dbg = debug_file(o);
        if (!dbg || !try_table(o, dbg, 0))
            try_table(o, abfd, 1);
    }
    /* Keep no file descriptor open: libbfd reopens a file if its debug
     * info is wanted later. */
    bfd_cache_close(abfd);
    if (o->debug_bfd)
        bfd_cache_close(o->debug_bfd);
    o->sym_state = o->nsyms ? 1 : -1;
}

static int has_dwarf(bfd *abfd)
{
    return abfd && (bfd_get_section_by_name(abfd, ".debug_info")
                    || bfd_get_section_by_name(abfd, ".zdebug_info"));
}

/* The bfd to read file:line from, decided once per object: asking libbfd
 * about an object without DWARF makes it search for debug files again on
 * every call. */
static bfd *line_source(struct a2n_object *o)
{
    if (o->lines_state == 0) {
        o->lines_state = -1;
        if (has_dwarf(o->main_bfd))
            o->line_bfd = o->main_bfd;
        else if (has_dwarf(debug_file(o)))
            o->line_bfd = o->debug_bfd;
        if (o->line_bfd)
            o->lines_state = 1;
    }
    return o->lines_state == 1 ? o->line_bfd : NULL;
}

/* ---- queries -------------------------------------------------------------- */

static void ensure_loaded(struct a2n_object *o)
{
    if (o->sym_state == 0) {
        bfd_error_handler_type previous = quiet_begin();
        load_symbols(o);
        quiet_end(previous);
    }
}

struct a2n_symbol *a2n_symbols_find(struct a2n_object *o, uint64_t vaddr)
{
    ensure_loaded(o);
    if (o->sym_state != 1)
        return NULL;
    size_t lo = 0, hi = o->nsyms;       /* first symbol with addr > vaddr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    struct a2n_symbol *s = &o->syms[lo - 1];
    return vaddr < s->end ? s : NULL;
}

const char *a2n_symbol_name(struct a2n_strings *strs, struct a2n_symbol *s)
{
    if (s->name)
        return s->name;
    const char *raw = bfd_asymbol_name((asymbol *)s->bfd_sym);
    /* .dynsym names come with their version: "memcpy@@GLIBC_2.14". */
    const char *at = strchr(raw, '@');
    char *plain = at && at != raw ? strndup(raw, (size_t)(at - raw)) : NULL;
    const char *name = plain ? plain : raw;
    char *demangled = a2n_demangle(name);
    if (demangled)
        s->name = a2n_intern(strs, demangled);
    else if (plain)
        s->name = a2n_intern(strs, plain);
    else
        s->name = raw;          /* lives in the bfd until a2n_close */
    free(demangled);
    free(plain);
    return s->name ? s->name : raw;
}

static asection *section_of(bfd *abfd, uint64_t vaddr)
{
    for (asection *sec = abfd->sections; sec; sec = sec->next) {
        if (!(bfd_section_flags(sec) & SEC_ALLOC))
            continue;
        uint64_t vma = bfd_section_vma(sec);
        if (vaddr >= vma && vaddr - vma < bfd_section_size(sec))
            return sec;
    }
    return NULL;
}

static int find_line(struct a2n_object *o, uint64_t vaddr, const char **file, unsigned *line);

int a2n_symbols_line(struct a2n_object *o, uint64_t vaddr, const char **file, unsigned *line)
{
    *file = NULL;
    *line = 0;
    ensure_loaded(o);
    bfd_error_handler_type previous = quiet_begin();
    int rc = find_line(o, vaddr, file, line);
    quiet_end(previous);
    return rc;
}

static int find_line(struct a2n_object *o, uint64_t vaddr, const char **file, unsigned *line)
{
    bfd *abfd = line_source(o);
    asection *sec = abfd ? section_of(abfd, vaddr) : NULL;
    if (!sec)
        return -1;
    /* No symbols: when the DWARF has no answer libbfd would otherwise
     * scan them all, linearly, to name a function we know already. */
    const char *f = NULL, *fn = NULL;
    unsigned l = 0;
    if (!bfd_find_nearest_line(abfd, sec, NULL, vaddr - bfd_section_vma(sec), &f, &fn, &l)
        || !f || !l)
        return -1;
    *file = f;
    *line = l;
    return 0;
}

static int table_names(bfd *abfd, int dynamic, const char *name, int *has_table)
{
    asymbol **syms;
    long n = read_symtab(abfd, dynamic, &syms);
    size_t len = strlen(name);
    int found = 0;
    *has_table = n > 0;
    for (long i = 0; i < n && !found; i++) {
        const char *s = bfd_asymbol_name(syms[i]);      /* "name@@VERSION" in .dynsym */
        found = s && !strncmp(s, name, len) && (s[len] == 0 || s[len] == '@');
    }
    free(syms);
    return found;
}

int a2n_symbols_names(struct a2n_object *o, const char *name)
{
    if (o->named_query == name)
        return o->named_answer;
    ensure_loaded(o);
    int found = 0, has_dynamic = 0, unused;
    if (o->main_bfd) {
        bfd_error_handler_type previous = quiet_begin();
        found = table_names(o->main_bfd, 1, name, &has_dynamic);
        if (!has_dynamic)
            found = table_names(o->main_bfd, 0, name, &unused);
        bfd_cache_close(o->main_bfd);
        quiet_end(previous);
    }
    o->named_query = name;
    o->named_answer = found;
    return found;
}

void a2n_symbols_free(struct a2n_object *o)
{
    bfd_error_handler_type previous = o->main_bfd ? quiet_begin() : NULL;
    if (o->debug_bfd)
        bfd_close(o->debug_bfd);
    if (o->main_bfd)
        bfd_close(o->main_bfd);
    free(o->bsyms);
    free(o->syms);
    o->syms = NULL;
    o->bsyms = NULL;
    o->abfd = o->line_bfd = o->main_bfd = o->debug_bfd = NULL;
    o->nsyms = 0;
    if (previous)
        quiet_end(previous);
}
