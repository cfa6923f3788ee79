/* Connecting instrumented modules whose hooks bound to glibc.
 *
 * glibc exports no-op __cyg_profile_func_enter/exit.  A library built with
 * -finstrument-functions that the program dlopens (a JNI library under a
 * Java VM is the common case) looks its hooks up in the global scope first,
 * where libc usually comes before libhookit: its calls then go to glibc's
 * no-ops, even when it was linked with -lhookit, and nothing is profiled.
 *
 * At start and after every dlopen we look at each loaded module's
 * relocations against the two hooks (JUMP_SLOT and GLOB_DAT, in DT_JMPREL
 * and DT_RELA/DT_REL).  A slot that holds glibc's no-op, or a lazy slot
 * whose symbol would resolve to it, is rewritten to point to libhookit's
 * hook (HOOKIT_CONNECT=1, the default), through mprotect when the slot
 * lies in the module's RELRO pages.  With HOOKIT_CONNECT=0, or when the
 * rewrite fails, the module is named once on stderr with the fix.
 *
 * Modules whose hooks bound to some other definition (a program's own
 * __cyg_profile_func_enter, another profiler) are left alone.
 *
 * When libhookit was not preloaded (it came in as a dependency of a
 * dlopen'ed library), the program's own dlopen and dlclose calls bind to
 * glibc and the lifecycle layer never sees a later library being loaded,
 * so it could not be connected.  The same rewrite then points other
 * modules' dlopen/dlclose slots to the lifecycle layer's wrappers (what
 * preloading would have given): every later dlopen is reported, scanned
 * and connected. */
#include "hookit/internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT  R_AARCH64_GLOB_DAT
#elif defined(__i386__)
#define R_JUMP_SLOT R_386_JMP_SLOT
#define R_GLOB_DAT  R_386_GLOB_DAT
#endif

#if __ELF_NATIVE_CLASS == 64
#define REL_SYM(info)  ELF64_R_SYM(info)
#define REL_TYPE(info) ELF64_R_TYPE(info)
#else
#define REL_SYM(info)  ELF32_R_SYM(info)
#define REL_TYPE(info) ELF32_R_TYPE(info)
#endif

/* The symbols whose slots we rewrite: the two hooks, then dlopen/dlclose. */
enum { HOOK_ENTER, HOOK_EXIT, DL_OPEN, DL_CLOSE, NSYMS };
static const char *const sym_names[NSYMS] = {
    "__cyg_profile_func_enter", "__cyg_profile_func_exit", "dlopen", "dlclose",
};

static int connect_mode = -1;           /* HOOKIT_CONNECT: 1 rewrite (default), 0 warn only */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;

/* Modules already named on stderr (by load address and name), so each is
 * named once however many dlopens follow. */
#define MAX_WARNED 64
static struct { ElfW(Addr) base; char name[64]; } warned[MAX_WARNED];
static int nwarned;

/* What one module needs for the walk. */
struct module {
    const char *name;
    ElfW(Addr) base;
    const ElfW(Phdr) *phdr;
    ElfW(Half) phnum;
    const ElfW(Sym) *symtab;
    const char *strtab;
    uintptr_t relro_lo, relro_hi;       /* pages made read-only after relocation */
};

/* One pass: what it found. */
struct scan {
    void *ours[NSYMS];                  /* libhookit's definitions (NULL: leave that symbol) */
    void *lazy_target[NSYMS];           /* what an unresolved slot would bind to */
    int connected, left;                /* hook slots rewritten, hook slots left unconnected */
    int redirected;                     /* dlopen/dlclose slots pointed to the lifecycle layer */
    int nothing_new;                    /* nothing loaded or unloaded since the last scan */
    unsigned long long adds, subs;      /* the loader's counters now */
    struct { uintptr_t lo, hi; } glibc[16]; /* glibc's code and data: libc.so, libdl.so */
    int nglibc;
    const char *self_path;              /* libhookit's file, for the warning */
};

/* The loader's load and unload counters at the last scan: a dlopen of a
 * library already loaded (or dlopen(NULL)) changes neither, and costs no
 * scan. */
static unsigned long long last_adds, last_subs;

HK_NOINSTR static void read_connect_mode(void)
{
    const char *v = getenv("HOOKIT_CONNECT");
    connect_mode = 1;
    if (!v || !*v || !strcmp(v, "1"))
        return;
    if (!strcmp(v, "0"))
        connect_mode = 0;
    else
        hk_log("HOOKIT_CONNECT='%.64s' is not valid: use 0 or 1 (using 1)", v);
}

/* Dynamic entries hold addresses that ld.so has usually relocated in
 * place; some (the vDSO's, read-only dynamic sections) stay offsets. */
HK_NOINSTR static uintptr_t dyn_addr(const struct module *m, ElfW(Addr) ptr)
{
    return ptr < m->base ? m->base + ptr : ptr;
}

HK_NOINSTR static int in_module(const struct module *m, uintptr_t addr)
{
    for (ElfW(Half) i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *p = &m->phdr[i];
        if (p->p_type == PT_LOAD && addr >= m->base + p->p_vaddr &&
            addr < m->base + p->p_vaddr + p->p_memsz)
            return 1;
    }
    return 0;
}

/* glibc's own objects: libc.so (the hooks' no-ops, dlopen since glibc
 * 2.34) and libdl.so (dlopen before that). */
HK_NOINSTR static int is_glibc_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
           !strncmp(base, "libdl.so", 8) || !strncmp(base, "libdl-", 6);
}

/* A definition in glibc.  By address ranges gathered beforehand: inside a
 * dl_iterate_phdr callback (the loader's write lock held) dladdr would
 * take the loader's other lock, against the order dlclose takes them. */
HK_NOINSTR static int in_glibc(const struct scan *s, void *addr)
{
    for (int i = 0; i < s->nglibc; i++)
        if ((uintptr_t)addr >= s->glibc[i].lo && (uintptr_t)addr < s->glibc[i].hi)
            return 1;
    return 0;
}

/* Write one slot, making a RELRO page writable for the moment. */
HK_NOINSTR static int write_slot(const struct module *m, void **slot, void *value)
{
    uintptr_t addr = (uintptr_t)slot;
    if (addr < m->relro_lo || addr >= m->relro_hi) {
        __atomic_store_n(slot, value, __ATOMIC_RELEASE);
        return 0;
    }
    uintptr_t page = addr & ~(uintptr_t)(getpagesize() - 1);
    if (mprotect((void *)page, (size_t)getpagesize(), PROT_READ | PROT_WRITE) != 0)
        return -1;
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    mprotect((void *)page, (size_t)getpagesize(), PROT_READ);
    return 0;
}

HK_NOINSTR static void check_slot(const struct module *m, struct scan *s, ElfW(Addr) offset,
                                  ElfW(Xword) info)
{
    unsigned type = (unsigned)REL_TYPE(info);
    if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
        return;
    const char *name = m->strtab + m->symtab[REL_SYM(info)].st_name;
    if (name[0] != '_' && name[0] != 'd')
        return;                 /* the common case, cheaply */
    int which = 0;
    while (which < NSYMS && strcmp(name, sym_names[which]) != 0)
        which++;
    if (which == NSYMS || !s->ours[which])
        return;
    void **slot = (void **)(m->base + offset);
    void *now = *slot;
    if (now == s->ours[which])
        return;
    /* An unresolved lazy slot points back into the module's own PLT. */
    void *target = in_module(m, (uintptr_t)now) ? s->lazy_target[which] : now;
    if (!in_glibc(s, target))
        return;
    int hook = which == HOOK_ENTER || which == HOOK_EXIT;
    if (connect_mode == 1 && write_slot(m, slot, s->ours[which]) == 0)
        hook ? s->connected++ : s->redirected++;
    else if (hook)
        s->left++;
}

HK_NOINSTR static void walk_rela(const struct module *m, struct scan *s, uintptr_t at, size_t size)
{
    const ElfW(Rela) *r = (const ElfW(Rela) *)at;
    for (size_t i = 0; i < size / sizeof *r; i++)
        check_slot(m, s, r[i].r_offset, r[i].r_info);
}

HK_NOINSTR static void walk_rel(const struct module *m, struct scan *s, uintptr_t at, size_t size)
{
    const ElfW(Rel) *r = (const ElfW(Rel) *)at;
    for (size_t i = 0; i < size / sizeof *r; i++)
        check_slot(m, s, r[i].r_offset, r[i].r_info);
}

HK_NOINSTR static void warn_once(const struct module *m, const char *lib)
{
    for (int i = 0; i < nwarned; i++)
        if (warned[i].base == m->base && !strncmp(warned[i].name, m->name, sizeof warned[i].name - 1))
            return;
    if (nwarned < MAX_WARNED) {
        warned[nwarned].base = m->base;
        strncpy(warned[nwarned].name, m->name, sizeof warned[nwarned].name - 1);
        nwarned++;
    }
    hk_log("%s is instrumented but its __cyg_profile_func_enter/exit calls go to glibc's no-op, "
           "not to hookit: it is not profiled; fix: LD_PRELOAD=%s (or `hookit run`), "
           "or HOOKIT_CONNECT=1 (automatic connection, the default)", m->name, lib);
}

HK_NOINSTR static void scan_module(struct module *m, struct scan *s)
{
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *p = &m->phdr[i];
        if (p->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(m->base + p->p_vaddr);
        else if (p->p_type == PT_GNU_RELRO) {
            uintptr_t page = (uintptr_t)getpagesize();
            m->relro_lo = (m->base + p->p_vaddr) & ~(page - 1);
            m->relro_hi = (m->base + p->p_vaddr + p->p_memsz) & ~(page - 1);
        }
    }
    if (!dyn)
        return;
    uintptr_t jmprel = 0, rela = 0, rel = 0;
    size_t pltrelsz = 0, relasz = 0, relsz = 0;
    ElfW(Sxword) pltrel = DT_RELA;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: m->symtab = (const ElfW(Sym) *)dyn_addr(m, dyn->d_un.d_ptr); break;
        case DT_STRTAB: m->strtab = (const char *)dyn_addr(m, dyn->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = dyn_addr(m, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
        case DT_PLTREL: pltrel = (ElfW(Sxword))dyn->d_un.d_val; break;
        case DT_RELA: rela = dyn_addr(m, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        case DT_REL: rel = dyn_addr(m, dyn->d_un.d_ptr); break;
        case DT_RELSZ: relsz = dyn->d_un.d_val; break;
        default: break;
        }
    }
    if (!m->symtab || !m->strtab)
        return;
    int before_left = s->left, before_connected = s->connected, before_redirected = s->redirected;
    if (jmprel)
        (pltrel == DT_REL ? walk_rel : walk_rela)(m, s, jmprel, pltrelsz);
    if (rela)
        walk_rela(m, s, rela, relasz);
    if (rel)
        walk_rel(m, s, rel, relsz);
    if (s->connected > before_connected)
        hk_debug("connected %s: its hooks were bound to glibc's no-op, now to hookit's",
                 m->name);
    if (s->redirected > before_redirected)
        hk_debug("%s: its dlopen/dlclose calls now go through hookit's (libhookit was not preloaded)",
                 m->name);
    if (s->left > before_left)
        warn_once(m, s->self_path);
}

HK_NOINSTR static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct module m = {
        .name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program",
        .base = info->dlpi_addr,
        .phdr = info->dlpi_phdr,
        .phnum = info->dlpi_phnum,
    };
    /* Our own module defines the hooks and calls them through hidden
     * aliases; glibc's own objects are what we point away from. */
    if (in_module(&m, (uintptr_t)&hk_func_enter) || is_glibc_name(m.name))
        return 0;
    scan_module(&m, arg);
    return 0;
}

/* First pass: whether anything was loaded or unloaded since the last scan
 * (a dlopen of a library already loaded changes nothing), and where glibc
 * is.  No dl* call in here (see in_glibc). */
HK_NOINSTR static int survey(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct scan *s = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        s->adds = info->dlpi_adds;
        s->subs = info->dlpi_subs;
        if (s->adds == last_adds && s->subs == last_subs) {
            s->nothing_new = 1;
            return 1;
        }
    }
    if (!info->dlpi_name || !is_glibc_name(info->dlpi_name))
        return 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum && s->nglibc < 16; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD) {
            s->glibc[s->nglibc].lo = info->dlpi_addr + p->p_vaddr;
            s->glibc[s->nglibc].hi = info->dlpi_addr + p->p_vaddr + p->p_memsz;
            s->nglibc++;
        }
    }
    return 0;
}

/* Number of dynamic symbols, from the GNU hash table (no DT_HASH on
 * modern toolchains): past the largest bucket, the chain ends on a set low bit. */
HK_NOINSTR static uint32_t gnu_hash_nsyms(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    const uint32_t *buckets = h + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

/* A function libhookit itself defines and exports, read from its own
 * dynamic symbol table (dlsym with our link map as handle is not safe
 * while we are a dependency still being loaded). */
HK_NOINSTR static void *own_export(const struct link_map *self, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu_hash = NULL;
    uintptr_t base = self->l_addr;
    for (const ElfW(Dyn) *d = self->l_ld; d->d_tag != DT_NULL; d++) {
        uintptr_t p = d->d_un.d_ptr < base ? base + d->d_un.d_ptr : d->d_un.d_ptr;
        if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)p;
        else if (d->d_tag == DT_STRTAB)
            strtab = (const char *)p;
        else if (d->d_tag == DT_GNU_HASH)
            gnu_hash = (const uint32_t *)p;
    }
    if (!symtab || !strtab || !gnu_hash)
        return NULL;
    uint32_t n = gnu_hash_nsyms(gnu_hash);
    for (uint32_t i = 1; i < n; i++) {
        const ElfW(Sym) *sym = &symtab[i];
        if (sym->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
            !strcmp(strtab + sym->st_name, name))
            return (void *)(base + sym->st_value);
    }
    return NULL;
}

/* The lifecycle layer's dlopen/dlclose wrappers, when they are ours to
 * give: libhookit's own definitions, and only when the program's lookups
 * do not already find them first (libhookit preloaded). */
HK_NOINSTR static void find_dl_wrappers(struct scan *s)
{
    Dl_info info;
    struct link_map *self = NULL;
    if (!dladdr1((void *)&hk_func_enter, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
        return;
    for (int i = DL_OPEN; i <= DL_CLOSE; i++) {
        void *ours = own_export(self, sym_names[i]);
        if (!ours)
            continue;           /* no wrapper in this build (the static variant) */
        void *first = dlsym(RTLD_DEFAULT, sym_names[i]);
        if (first == ours)
            continue;           /* preloaded: every module binds to it already */
        s->ours[i] = ours;
        s->lazy_target[i] = first;
    }
}

/* Look at every loaded module (at start, and after each dlopen: one dlopen
 * may bring in several). */
HK_NOINSTR void hk_rebind_scan(void)
{
#if defined(R_JUMP_SLOT)
    int saved = errno;
    /* Every dl* call before the lock: dlsym and dladdr take the loader's
     * lock, which a thread inside dlopen holds while a constructor there
     * may dlopen and come here. */
    struct scan s = {
        .ours = { (void *)&hk_func_enter, (void *)&hk_func_exit },
        .lazy_target = { dlsym(RTLD_DEFAULT, sym_names[HOOK_ENTER]),
                         dlsym(RTLD_DEFAULT, sym_names[HOOK_EXIT]) },
    };
    Dl_info self;
    s.self_path = dladdr((void *)&hk_func_enter, &self) && self.dli_fname ? self.dli_fname
                                                                         : "libhookit.so";
    find_dl_wrappers(&s);
    pthread_mutex_lock(&scan_lock);
    if (connect_mode < 0)
        read_connect_mode();
    dl_iterate_phdr(survey, &s);
    if (!s.nothing_new) {
        dl_iterate_phdr(scan_one, &s);
        last_adds = s.adds;
        last_subs = s.subs;
    }
    pthread_mutex_unlock(&scan_lock);
    errno = saved;
#endif
}
