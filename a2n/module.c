/*
 * The modules of a process, from its maps.
 *
 * Every mapping of a file belongs to the module (object file, load bias)
 * it is consistent with: the load bias is what the dynamic loader added to
 * the link-time addresses, so a mapping at START of file offset OFF comes
 * from the PT_LOAD segment whose file range holds OFF, and
 *     bias = START - (p_vaddr + (OFF - p_offset)).
 * A non-PIE executable has bias 0; a PIE or a shared library its load
 * address minus its first p_vaddr.  Several mappings of one file (text,
 * rodata, data, relro) are one module because they give the same bias.
 *
 * A reload builds a new sorted range table; modules it no longer sees stay
 * in the list, marked unmapped, with the spans they last had.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

#define DELETED_SUFFIX " (deleted)"

struct load_ctx {
    struct a2n *a;
    struct a2n_range *ranges;
    size_t nranges, cap;
    struct a2n_module *last_module;
};

/* ---- object files ---------------------------------------------------- */

static char *clean_path(const char *path, int *deleted)
{
    size_t n = strlen(path), k = strlen(DELETED_SUFFIX);
    *deleted = n > k && strcmp(path + n - k, DELETED_SUFFIX) == 0;
    return strndup(path, *deleted ? n - k : n);
}

static int is_regular_file(const char *path, uint64_t want_inode, int check_inode)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return !check_inode || (uint64_t)st.st_ino == want_inode;
}

/* Where to read the object from: its path when that is still the mapped
 * file (same inode); else the kernel's handle on the mapping itself, which
 * also works for deleted files and memfds; else the path as a last guess
 * (file systems that report other inode numbers).  Never a device: opening
 * one could have side effects. */
static char *choose_open_path(struct a2n *a, const char *path, int deleted,
                              const struct a2n_map *m)
{
    if (!deleted && is_regular_file(path, m->inode, 1))
        return strdup(path);
    char mf[128];
    if (a->pid)
        snprintf(mf, sizeof mf, "/proc/%d/map_files/%llx-%llx", (int)a->pid,
                 (unsigned long long)m->start, (unsigned long long)m->end);
    else
        snprintf(mf, sizeof mf, "/proc/self/map_files/%llx-%llx",
                 (unsigned long long)m->start, (unsigned long long)m->end);
    if (is_regular_file(mf, 0, 0) && access(mf, R_OK) == 0)
        return strdup(mf);
    if (!deleted && is_regular_file(path, 0, 0))
        return strdup(path);
    return NULL;
}

static void read_file_segments(struct a2n_object *o)
{
    o->nsegs = -1;
    if (!o->open_path)
        return;
    int fd = open(o->open_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    o->nsegs = a2n_elf_segments(a2n_read_fd, (void *)(intptr_t)fd, &o->segs);
    close(fd);
}

static void read_image_segments(struct a2n_object *o)
{
    struct a2n_mem mem = { o->image, o->image_size };
    o->nsegs = o->image ? a2n_elf_segments(a2n_read_mem, &mem, &o->segs) : -1;
}

static struct a2n_object *object_get(struct a2n *a, const struct a2n_map *m, int is_vdso)
{
    int deleted = 0;
    char *path = is_vdso ? strdup("[vdso]") : clean_path(m->path, &deleted);
    if (!path)
        return NULL;
    /* The vdso has no inode: its address tells one image from another. */
    uint64_t inode = is_vdso ? m->start : m->inode;
    for (struct a2n_object *o = a->objects; o; o = o->next) {
        if (o->inode == inode && strcmp(o->path, path) == 0) {
            free(path);
            return o;
        }
    }
    struct a2n_object *o = calloc(1, sizeof *o);
    if (!o) {
        free(path);
        return NULL;
    }
    o->path = path;
    o->inode = inode;
    if (is_vdso) {
        o->image = a2n_vdso_image(a, m->start, m->end, &o->image_owned);
        o->image_size = m->end - m->start;
        read_image_segments(o);
    } else {
        o->open_path = choose_open_path(a, path, deleted, m);
        read_file_segments(o);
        /* A deleted file or memfd can only be read while it is mapped:
         * its symbols are loaded now, not at the first lookup. */
        if (o->open_path && strncmp(o->open_path, "/proc/", 6) == 0 && o->nsegs > 0)
            a2n_symbols_find(o, 0);
    }
    if (o->nsegs < 0 && !o->image)
        o->sym_state = -1;      /* not an ELF file we can read: fallbacks only */
    o->next = a->objects;
    a->objects = o;
    return o;
}

/* ---- load bias --------------------------------------------------------- */

/* The loader maps each segment from its file offset rounded down to a page. */
static uint64_t page_size(void)
{
    static uint64_t size;
    if (!size) {
        long s = sysconf(_SC_PAGESIZE);
        size = s > 0 ? (uint64_t)s : 4096;
    }
    return size;
}

/* Is the mapping what the loader makes of some segment at this bias? */
static int consistent(const struct a2n_object *o, const struct a2n_map *m, uint64_t bias)
{
    uint64_t vstart = m->start - bias, page = page_size();
    if (o->nsegs <= 0)
        return vstart == m->file_offset;
    for (int i = 0; i < o->nsegs; i++) {
        const struct a2n_segment *s = &o->segs[i];
        uint64_t seg_end = s->vaddr + (s->memsz > s->filesz ? s->memsz : s->filesz);
        if (vstart < (s->vaddr & ~(page - 1)) || vstart >= seg_end)
            continue;
        if (vstart - s->vaddr == m->file_offset - s->offset)
            return 1;
    }
    return 0;
}

static int contains_offset(const struct a2n_segment *s, uint64_t off)
{
    uint64_t first = s->offset & ~(page_size() - 1);
    uint64_t last = s->offset + (s->filesz ? s->filesz : 1);
    return off >= first && off < last;
}

static struct a2n_module *module_find(struct a2n *a, struct a2n_object *o, uint64_t bias)
{
    for (struct a2n_module *mod = a->modules; mod; mod = mod->next)
        if (mod->object == o && mod->bias == bias)
            return mod;
    return NULL;
}

/* The bias of a mapping that does not continue the previous module: the
 * first segment holding its file offset, preferring a bias some module
 * already has (the mapping then rejoins it). */
static uint64_t choose_bias(struct a2n *a, struct a2n_object *o, const struct a2n_map *m)
{
    uint64_t first_guess = m->start - m->file_offset;
    int have_guess = 0;
    for (int i = 0; i < o->nsegs; i++) {
        const struct a2n_segment *s = &o->segs[i];
        if (!contains_offset(s, m->file_offset))
            continue;
        uint64_t bias = m->start - s->vaddr + s->offset - m->file_offset;
        if (module_find(a, o, bias))
            return bias;
        if (!have_guess) {
            first_guess = bias;
            have_guess = 1;
        }
    }
    return first_guess;
}

/* ---- modules ------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static struct a2n_module *module_get(struct a2n *a, struct a2n_object *o, uint64_t bias)
{
    struct a2n_module *mod = module_find(a, o, bias);
    if (mod)
        return mod;
    mod = calloc(1, sizeof *mod);
    if (!mod)
        return NULL;
    mod->object = o;
    mod->bias = bias;
    mod->path = a2n_intern(&a->strings, o->path);
    mod->name = mod->path ? a2n_intern(&a->strings, base_name(o->path)) : NULL;
    if (!mod->name) {
        free(mod);
        return NULL;
    }
    mod->next = a->modules;
    a->modules = mod;
    return mod;
}

static int module_add_span(struct a2n *a, struct a2n_module *mod, uint64_t start, uint64_t end)
{
    if (mod->seen_generation != a->generation) {
        mod->seen_generation = a->generation;
        mod->nspans = 0;
    }
    if (mod->nspans && mod->spans[mod->nspans - 1].end == start) {
        mod->spans[mod->nspans - 1].end = end;
        return 0;
    }
    if (mod->nspans == mod->spans_cap) {
        size_t cap = mod->spans_cap ? mod->spans_cap * 2 : 4;
        struct a2n_span *s = realloc(mod->spans, cap * sizeof *s);
        if (!s)
            return -1;
        mod->spans = s;
        mod->spans_cap = cap;
    }
    mod->spans[mod->nspans++] = (struct a2n_span){ start, end };
    return 0;
}

/* ---- ranges ------------------------------------------------------------ */

static int add_range(struct load_ctx *c, const struct a2n_range *r)
{
    if (c->nranges == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct a2n_range *p = realloc(c->ranges, cap * sizeof *p);
        if (!p)
            return -1;
        c->ranges = p;
        c->cap = cap;
    }
    c->ranges[c->nranges++] = *r;
    return 0;
}

static int on_file_mapping(struct load_ctx *c, const struct a2n_map *m, int is_vdso)
{
    struct a2n *a = c->a;
    struct a2n_object *o = object_get(a, m, is_vdso);
    if (!o)
        return -1;
    struct a2n_module *mod = c->last_module;
    if (!mod || mod->object != o || !consistent(o, m, mod->bias))
        mod = module_get(a, o, choose_bias(a, o, m));
    if (!mod || module_add_span(a, mod, m->start, m->end))
        return -1;
    c->last_module = mod;
    struct a2n_range r = { m->start, m->end, A2N_RANGE_FILE, mod, NULL };
    return add_range(c, &r);
}

static int on_anon_mapping(struct load_ctx *c, const struct a2n_map *m)
{
    const char *label = m->path[0] == '[' ? a2n_intern(&c->a->strings, m->path) : "[anon]";
    if (!label)
        return -1;
    struct a2n_range r = { m->start, m->end, A2N_RANGE_ANON, NULL, label };
    return add_range(c, &r);
}

static int on_mapping(void *ctx, const struct a2n_map *m)
{
    struct load_ctx *c = ctx;
    /* Real files have absolute paths ("/memfd:x (deleted)" too); anything
     * else ("", "[heap]", "[stack]", "[anon:name]", "anon_inode:...") has
     * no object file behind it. */
    if (strcmp(m->path, "[vdso]") == 0)
        return on_file_mapping(c, m, 1);
    if (m->path[0] == '/')
        return on_file_mapping(c, m, 0);
    c->last_module = NULL;
    return on_anon_mapping(c, m);
}

static int by_start(const void *x, const void *y)
{
    const struct a2n_range *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int sorted(const struct a2n_range *r, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (r[i].start < r[i - 1].start)
            return 0;
    return 1;
}

static int same_ranges(const struct a2n *a, const struct load_ctx *c)
{
    if (a->nranges != c->nranges)
        return 0;
    for (size_t i = 0; i < c->nranges; i++) {
        const struct a2n_range *x = &a->ranges[i], *y = &c->ranges[i];
        if (x->start != y->start || x->end != y->end || x->module != y->module)
            return 0;
    }
    return 1;
}

/* Returns 1 when the maps changed, 0 when not, -1 on failure. */
int a2n_modules_load(struct a2n *a)
{
    struct load_ctx c = { .a = a };
    a->generation++;
    int rc = a2n_read_maps(a->pid, on_mapping, &c);
    if (rc != 0 && a->pid == 0 && c.nranges == 0) {
        c.last_module = NULL;
        rc = a2n_read_loaded_objects(on_mapping, &c);
    }
    if (rc != 0) {
        int saved = errno;
        free(c.ranges);
        errno = saved;
        return -1;
    }
    if (!sorted(c.ranges, c.nranges))
        qsort(c.ranges, c.nranges, sizeof *c.ranges, by_start);
    for (struct a2n_module *mod = a->modules; mod; mod = mod->next)
        mod->mapped = mod->seen_generation == a->generation;
    int changed = !same_ranges(a, &c);
    free(a->ranges);
    a->ranges = c.ranges;
    a->nranges = c.nranges;
    a->last_range = 0;
    return changed;
}

struct a2n_range *a2n_range_find(struct a2n *a, uint64_t addr)
{
    if (a->last_range < a->nranges) {
        struct a2n_range *r = &a->ranges[a->last_range];
        if (addr >= r->start && addr < r->end)
            return r;
    }
    size_t lo = 0, hi = a->nranges;     /* first range with start > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->ranges[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= a->ranges[lo - 1].end)
        return NULL;
    a->last_range = lo - 1;
    return &a->ranges[lo - 1];
}

struct a2n_module *a2n_unmapped_find(struct a2n *a, uint64_t addr)
{
    for (struct a2n_module *mod = a->modules; mod; mod = mod->next) {
        if (mod->mapped)
            continue;
        for (size_t i = 0; i < mod->nspans; i++)
            if (addr >= mod->spans[i].start && addr < mod->spans[i].end)
                return mod;
    }
    return NULL;
}

void a2n_modules_free(struct a2n *a)
{
    while (a->modules) {
        struct a2n_module *mod = a->modules;
        a->modules = mod->next;
        free(mod->spans);
        free(mod);
    }
    while (a->objects) {
        struct a2n_object *o = a->objects;
        a->objects = o->next;
        a2n_symbols_free(o);
        free(o->segs);
        free(o->path);
        free(o->open_path);
        if (o->image_owned)
            free(o->image);
        free(o);
    }
    free(a->ranges);
    a->ranges = NULL;
    a->nranges = 0;
}
