/* The JVMTI agent: Java methods in the same per-thread trees as native code.
 *
 *   java -agentpath:<prefix>/lib/hookit/libjprof.so[=OPTIONS] Main
 *
 * Java method entry and exit become synthetic frames ("J:Worker.run",
 * module = the class's package) pushed into jprof's trees, so a tree reads
 * J:Main.main -> J:Worker.run -> F:libNative.so.Java_Worker_compute.
 *
 * One instance, one start path: jprof is always started by libhookit, as
 * at every other start (HOOKIT_* read and checked once by hookit/config.c,
 * the plugin filled in once by HookitStart).  When libhookit is already
 * there (preloaded, `hookit run`) it has loaded this very file as its
 * profiler (same path, same dlopen handle), and the agent only adds Java
 * frames.  Otherwise the agent loads the libhookit of its own installation
 * (<prefix>/lib/libhookit.so next to <prefix>/lib/hookit/), whose start-up
 * loads this file as its profiler in turn; a JNI library linked with
 * -lhookit later finds that libhookit loaded, and libhookit writes the
 * profile at exit.
 *
 * Options (comma separated after '='; `help` lists them):
 *   include=PAT, exclude=PAT   class filters ("com.acme.*", "Main", "*.Worker");
 *                              repeatable; a pattern may also name "Class.method"
 *   mode=all|native            all Java frames (default), or only those that
 *                              lead to a call into instrumented native code:
 *                              a per-thread shadow stack, pushed into the tree
 *                              when such a native method is entered
 *   signature                  method names with parameter types
 *   noperfmap                  do not write /tmp/perf-<pid>.map
 *
 * JIT-compiled code and the VM's generated stubs are written to
 * /tmp/perf-<pid>.map (perf's format) so A2N, perf and the live reader can
 * name addresses in them.
 *
 * Without the JDK's jvmti.h this file compiles to nothing. */
#include "profiler/jprof/jprof.h"
#include "frames.h"
#include "profiler/jprof/tree/tree.h"
#include "common/log.h"

#if __has_include(<jvmti.h>)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <jvmti.h>
#pragma GCC diagnostic pop

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------- */
#define MAX_PATTERNS 32
static struct {
    const char *include[MAX_PATTERNS], *exclude[MAX_PATTERNS];
    int ninclude, nexclude;
    int native_only;            /* mode=native */
    int signature;
    int perfmap;
} opt = { .perfmap = 1 };

static jvmtiEnv *jvmti;

/* Before libhookit is there (options, a JVM without JVMTI) the one logger
 * is called directly; after, through the host. */
#define LOG(...) (jp_host ? jp_host->log(__VA_ARGS__) : hk_log_write(__VA_ARGS__))

static const char *const option_help[] = {
    "include=PAT      record only classes matching PAT (com.acme.*, Main, *.Worker, Class.method); repeatable",
    "exclude=PAT      do not record classes matching PAT; repeatable; wins over include",
    "mode=all|native  all Java frames (default), or only those leading to instrumented native code",
    "signature        method names with their parameter types: Worker.run(int, String)",
    "noperfmap        do not write /tmp/perf-<pid>.map (names of JIT-compiled code)",
    "help             this list",
};

JP_NOINSTR static void parse_options(char *text)
{
    if (!text)
        return;
    for (char *save = NULL, *o = strtok_r(text, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
        if (!strncmp(o, "include=", 8) && o[8] && opt.ninclude < MAX_PATTERNS)
            opt.include[opt.ninclude++] = o + 8;
        else if (!strncmp(o, "exclude=", 8) && o[8] && opt.nexclude < MAX_PATTERNS)
            opt.exclude[opt.nexclude++] = o + 8;
        else if (!strcmp(o, "mode=all"))
            opt.native_only = 0;
        else if (!strcmp(o, "mode=native"))
            opt.native_only = 1;
        else if (!strcmp(o, "signature"))
            opt.signature = 1;
        else if (!strcmp(o, "noperfmap"))
            opt.perfmap = 0;
        else if (!strcmp(o, "perfmap"))
            opt.perfmap = 1;
        else if (!strcmp(o, "help")) {
            for (size_t i = 0; i < sizeof option_help / sizeof *option_help; i++)
                LOG("jprof agent option %s", option_help[i]);
        } else {
            LOG("jprof agent: unknown option '%.64s' ignored (options: include=PAT, exclude=PAT, "
                "mode=all|native, signature, noperfmap, help)", o);
        }
    }
}

/* ---- names ------------------------------------------------------------------ */
/* "Lcom/acme/Foo;" -> "com.acme.Foo"; a hidden class (a lambda's)
 * "LMain$$Lambda$14/0x0000000800c03000;" -> "Main$$Lambda$14", the same
 * name in every run. */
JP_NOINSTR static void class_name(const char *sig, char *out, size_t size)
{
    size_t o = 0;
    if (*sig == 'L')
        sig++;
    for (; *sig && *sig != ';' && o + 1 < size; sig++) {
        if ((sig[0] == '/' || sig[0] == '.') && sig[1] == '0' && sig[2] == 'x')
            break;
        out[o++] = *sig == '/' ? '.' : *sig;
    }
    out[o] = 0;
}

/* One JVM field descriptor as Java source writes the type; returns the
 * descriptor's rest. */
JP_NOINSTR static const char *java_type(const char *d, char *out, size_t size, size_t *o)
{
    int dims = 0;
    while (*d == '[')
        dims++, d++;
    const char *t = NULL;
    char buf[256];
    switch (*d) {
    case 'Z': t = "boolean"; break;
    case 'B': t = "byte"; break;
    case 'C': t = "char"; break;
    case 'S': t = "short"; break;
    case 'I': t = "int"; break;
    case 'J': t = "long"; break;
    case 'F': t = "float"; break;
    case 'D': t = "double"; break;
    case 'V': t = "void"; break;
    case 'L': {
        const char *end = strchr(d, ';');
        if (!end)
            return d + strlen(d);
        const char *start = d + 1;
        for (const char *p = start; p < end; p++)   /* the simple name, as stack traces in IDEs */
            if (*p == '/')
                start = p + 1;
        size_t n = (size_t)(end - start) < sizeof buf - 1 ? (size_t)(end - start) : sizeof buf - 1;
        memcpy(buf, start, n);
        buf[n] = 0;
        t = buf;
        d = end;
        break;
    }
    default:
        return d + (*d != 0);
    }
    *o += (size_t)snprintf(out + *o, *o < size ? size - *o : 0, "%s", t);
    for (; dims > 0; dims--)
        *o += (size_t)snprintf(out + *o, *o < size ? size - *o : 0, "[]");
    return d + 1;
}

/* "(ILjava/lang/String;[J)V" -> "(int, String, long[])" */
JP_NOINSTR static void java_params(const char *sig, char *out, size_t size)
{
    size_t o = 0;
    out[0] = 0;
    if (*sig != '(' || size < 3)
        return;
    out[o++] = '(';
    out[o] = 0;
    const char *d = sig + 1;
    int first = 1;
    while (*d && *d != ')' && o < size - 2) {
        if (!first)
            o += (size_t)snprintf(out + o, size - o, ", ");
        first = 0;
        d = java_type(d, out, size - 1, &o);
        if (o >= size - 1)
            o = size - 2;
    }
    out[o++] = ')';
    out[o] = 0;
}

/* Package and "Class.method[(params)]" of a method. */
JP_NOINSTR static int method_names(jmethodID m, char *pkg, size_t psize, char *name, size_t nsize,
                                   int *is_native)
{
    jclass klass;
    char *mname = NULL, *msig = NULL, *csig = NULL;
    jint mods = 0;
    if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &klass) != JVMTI_ERROR_NONE ||
        (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE)
        return -1;
    if ((*jvmti)->GetMethodName(jvmti, m, &mname, &msig, NULL) != JVMTI_ERROR_NONE) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
        return -1;
    }
    (*jvmti)->GetMethodModifiers(jvmti, m, &mods);
    *is_native = (mods & 0x0100) != 0;      /* ACC_NATIVE */
    char full[1024], params[512] = "";
    class_name(csig, full, sizeof full);
    char *dot = strrchr(full, '.');
    const char *simple = dot ? dot + 1 : full;
    if (dot)
        snprintf(pkg, psize, "%.*s", (int)(dot - full), full);
    else
        pkg[0] = 0;
    if (opt.signature)
        java_params(msig, params, sizeof params);
    if (snprintf(name, nsize, "%s.%s%s", simple, mname, params) >= (int)nsize)
        name[nsize - 1] = 0;        /* a very long name is cut, never fatal */
    (*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)msig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    return 0;
}

/* include/exclude: a pattern is matched against "pkg.Class" and
 * "pkg.Class.method"; "com.acme.*" also takes sub-packages. */
JP_NOINSTR static int pattern_hits(const char *const *pats, int n, const char *cls, const char *meth)
{
    for (int i = 0; i < n; i++)
        if (!fnmatch(pats[i], cls, 0) || !fnmatch(pats[i], meth, 0))
            return 1;
    return 0;
}

JP_NOINSTR static int wanted(const char *pkg, const char *name)
{
    char cls[1024], meth[1280];
    const char *paren = strchr(name, '(');
    size_t nlen = paren ? (size_t)(paren - name) : strlen(name);
    const char *lastdot = memrchr(name, '.', nlen);
    size_t clen = lastdot ? (size_t)(lastdot - name) : nlen;
    snprintf(cls, sizeof cls, "%s%s%.*s", pkg, *pkg ? "." : "", (int)clen, name);
    snprintf(meth, sizeof meth, "%s%s%.*s", pkg, *pkg ? "." : "", (int)nlen, name);
    if (opt.ninclude && !pattern_hits(opt.include, opt.ninclude, cls, meth))
        return 0;
    return !pattern_hits(opt.exclude, opt.nexclude, cls, meth);
}

/* ---- methods: jmethodID -> key and flags --------------------------------------
 * Readers never lock: slots are published with a release store of the id,
 * and a table that grows is replaced, never freed (a reader may still be in
 * it; it then misses and takes the locked path). */
enum {
    M_WANTED = 1,               /* passes the filters */
    M_NATIVE = 2,               /* a native method */
    M_NATIVE_HOOKED = 4,        /* ... bound to a function in an instrumented module */
    M_NATIVE_KNOWN = 8,         /* ... and we know where it is bound */
};
struct method_slot {
    jmethodID id;
    uint64_t key;
    volatile uint32_t flags;
};
struct method_table {
    uint32_t size, used;
    struct method_slot slots[];
};
static struct method_table *volatile methods;
static pthread_mutex_t methods_lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR static uint32_t hash_id(jmethodID id, uint32_t size)
{
    uint64_t h = (uint64_t)(uintptr_t)id * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (size - 1);
}

JP_NOINSTR static struct method_slot *find_in(struct method_table *t, jmethodID id)
{
    if (!t)
        return NULL;
    for (uint32_t h = hash_id(id, t->size);; h = (h + 1) & (t->size - 1)) {
        jmethodID cur = __atomic_load_n(&t->slots[h].id, __ATOMIC_ACQUIRE);
        if (cur == id)
            return &t->slots[h];
        if (!cur)
            return NULL;
    }
}

JP_NOINSTR static struct method_table *new_table(uint32_t size)
{
    struct method_table *t = calloc(1, sizeof *t + (size_t)size * sizeof(struct method_slot));
    if (t)
        t->size = size;
    return t;
}

JP_NOINSTR static struct method_slot *insert_locked(jmethodID id, uint64_t key, uint32_t flags)
{
    struct method_table *t = methods;
    if (!t || (t->used + 1) * 2 > t->size) {
        struct method_table *bigger = new_table(t ? t->size * 2 : 4096);
        if (!bigger)
            return NULL;
        for (uint32_t i = 0; t && i < t->size; i++) {
            struct method_slot *s = &t->slots[i];
            if (!s->id)
                continue;
            uint32_t h = hash_id(s->id, bigger->size);
            while (bigger->slots[h].id)
                h = (h + 1) & (bigger->size - 1);
            bigger->slots[h] = (struct method_slot){ s->id, s->key, s->flags };
            bigger->used++;
        }
        __atomic_store_n(&methods, bigger, __ATOMIC_RELEASE);
        t = bigger;
    }
    uint32_t h = hash_id(id, t->size);
    while (t->slots[h].id)
        h = (h + 1) & (t->size - 1);
    t->slots[h].key = key;
    t->slots[h].flags = flags;
    t->used++;
    __atomic_store_n(&t->slots[h].id, id, __ATOMIC_RELEASE);
    return &t->slots[h];
}

JP_NOINSTR static struct method_slot *method_info(jmethodID id)
{
    struct method_slot *s = find_in(__atomic_load_n(&methods, __ATOMIC_ACQUIRE), id);
    if (JP_LIKELY(s))
        return s;
    char pkg[512], name[1024], full[1040];
    int is_native = 0;
    uint32_t flags = 0;
    uint64_t key = 0;
    if (method_names(id, pkg, sizeof pkg, name, sizeof name, &is_native) == 0) {
        flags = (wanted(pkg, name) ? M_WANTED : 0) | (is_native ? M_NATIVE : 0);
        snprintf(full, sizeof full, "J:%s", name);
        key = jp_synthetic_key(full, pkg);
        if (!key)
            flags &= ~(uint32_t)M_WANTED;
    }
    pthread_mutex_lock(&methods_lock);
    s = find_in(methods, id);
    if (!s)
        s = insert_locked(id, key, flags);
    pthread_mutex_unlock(&methods_lock);
    return s;
}

/* ---- is a native function in an instrumented module? ---------------------------
 * A module is instrumented when it has relocations against the compiler's
 * hooks.  Answers are kept per module (load address). */
#define MAX_MODULES 256
static struct { uintptr_t base; int hooked; } module_cache[MAX_MODULES];
static int nmodules;
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;

JP_NOINSTR static int rel_names_hook(const ElfW(Sym) *symtab, const char *strtab, uint32_t sym)
{
    const char *n = strtab + symtab[sym].st_name;
    return !strcmp(n, "__cyg_profile_func_enter") || !strcmp(n, "__cyg_profile_func_exit");
}

JP_NOINSTR static int module_is_instrumented(const struct link_map *map)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    uintptr_t jmprel = 0, rela = 0;
    size_t pltrelsz = 0, relasz = 0;
    uintptr_t base = map->l_addr;
    for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
        uintptr_t p = d->d_un.d_ptr < base ? base + d->d_un.d_ptr : d->d_un.d_ptr;
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: strtab = (const char *)p; break;
        case DT_JMPREL: jmprel = p; break;
        case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
        case DT_RELA: rela = p; break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    /* RELA on the 64-bit targets hookit supports. */
    const ElfW(Rela) *r = (const ElfW(Rela) *)jmprel;
    for (size_t i = 0; jmprel && i < pltrelsz / sizeof *r; i++)
        if (rel_names_hook(symtab, strtab, (uint32_t)ELF64_R_SYM(r[i].r_info)))
            return 1;
    r = (const ElfW(Rela) *)rela;
    for (size_t i = 0; rela && i < relasz / sizeof *r; i++)
        if (rel_names_hook(symtab, strtab, (uint32_t)ELF64_R_SYM(r[i].r_info)))
            return 1;
    return 0;
}

JP_NOINSTR static int address_is_instrumented(void *addr)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    int hooked = -1;
    pthread_mutex_lock(&module_lock);
    for (int i = 0; i < nmodules; i++)
        if (module_cache[i].base == (uintptr_t)map->l_addr)
            hooked = module_cache[i].hooked;
    if (hooked < 0) {
        hooked = module_is_instrumented(map);
        if (nmodules < MAX_MODULES)
            module_cache[nmodules++] = (typeof(module_cache[0])){ (uintptr_t)map->l_addr, hooked };
    }
    pthread_mutex_unlock(&module_lock);
    return hooked;
}

/* ---- per-thread state ---------------------------------------------------------- */
struct shadow_frame {
    jmethodID id;
    uint64_t key;
};
struct agent_thread {
    struct shadow_frame *stack;     /* mode=native: the Java frames of this thread */
    uint32_t depth, capacity;
    uint32_t pushed;                /* stack[0..pushed) are in jprof's tree */
    /* Native methods entered before they were bound: their first call.
     * Binding may run Java code that enters (and binds) other natives. */
    jmethodID pending[8];
    uint32_t npending;
    char name[16];                  /* the Java thread's name */
    int name_applied;
};
static __thread struct agent_thread *agent_self;

JP_NOINSTR static struct agent_thread *agent_thread(void)
{
    if (JP_UNLIKELY(!agent_self))
        agent_self = calloc(1, sizeof *agent_self);
    return agent_self;
}

JP_NOINSTR static int collecting(void)
{
    return jp_host && *jp_host->collecting;
}

/* The Java name into the thread's record, once it has one. */
JP_NOINSTR static void apply_name(struct agent_thread *a)
{
    struct jp_thread *t = jp_self_live();
    if (!a->name[0] || !t || !t->rec || t->rec->state != ARENA_THREAD_RUNNING)
        return;
    a->name_applied = 1;
    if (t->named)
        return;                     /* the first Java name stays (see learn_thread_name) */
    memcpy(t->rec->name, a->name, sizeof t->rec->name);
    t->named = 1;
}

JP_NOINSTR static void learn_thread_name(jthread thread)
{
    struct agent_thread *a = agent_thread();
    jvmtiThreadInfo info;
    if (!a || (*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
        return;
    /* The first name stays: the launcher's main thread comes back as
     * "DestroyJavaVM" to wait for the others. */
    if (info.name && !a->name[0]) {
        snprintf(a->name, sizeof a->name, "%s", info.name);
        a->name_applied = 0;
    }
    if (info.name)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    apply_name(a);
}

JP_NOINSTR static void add_pending(struct agent_thread *a, jmethodID id)
{
    if (a && a->npending < sizeof a->pending / sizeof *a->pending)
        a->pending[a->npending++] = id;
}

JP_NOINSTR static int take_pending(struct agent_thread *a, jmethodID id)
{
    for (uint32_t i = a ? a->npending : 0; i > 0; i--)
        if (a->pending[i - 1] == id) {
            a->npending = i - 1;    /* and any left above it: they were never bound */
            return 1;
        }
    return 0;
}

/* mode=native: the pending Java frames go into the tree, outermost first. */
JP_NOINSTR static void materialize(struct agent_thread *a)
{
    for (; a->pushed < a->depth; a->pushed++)
        jp_enter_synthetic(a->stack[a->pushed].key);
    if (!a->name_applied)
        apply_name(a);
}

JP_NOINSTR static void shadow_push(struct agent_thread *a, jmethodID id, uint64_t key)
{
    if (a->depth == a->capacity) {
        uint32_t cap = a->capacity ? a->capacity * 2 : 256;
        struct shadow_frame *s = realloc(a->stack, cap * sizeof *s);
        if (!s)
            return;
        a->stack = s;
        a->capacity = cap;
    }
    a->stack[a->depth++] = (struct shadow_frame){ id, key };
}

JP_NOINSTR static void shadow_pop(struct agent_thread *a, jmethodID id)
{
    uint32_t d = a->depth;
    while (d > 0 && a->stack[d - 1].id != id)
        d--;
    if (d == 0)
        return;                     /* an exit without its entry (events enabled late) */
    while (a->depth >= d) {
        a->depth--;
        if (a->depth < a->pushed) {
            a->pushed--;
            jp_exit_synthetic(a->stack[a->depth].key);
        }
    }
}

/* ---- JVMTI callbacks -------------------------------------------------------------- */
JP_NOINSTR static void JNICALL on_method_entry(jvmtiEnv *env, JNIEnv *jni, jthread thread, jmethodID id)
{
    if (!collecting())
        return;
    struct method_slot *m = method_info(id);
    if (!m || !(m->flags & M_WANTED))
        return;
    uint32_t flags = m->flags;
    if (!opt.native_only) {
        /* A native method bound into instrumented code is its F: frame.
         * Where it is bound is learnt just after its first entry. */
        if (flags & M_NATIVE) {
            if (!(flags & M_NATIVE_KNOWN)) {
                add_pending(agent_thread(), id);
                return;
            }
            if (flags & M_NATIVE_HOOKED)
                return;
        }
        jp_enter_synthetic(m->key);
        struct agent_thread *a = agent_self;
        if (JP_UNLIKELY(a && !a->name_applied))
            apply_name(a);
        return;
    }
    struct agent_thread *a = agent_thread();
    if (!a)
        return;
    if (!(flags & M_NATIVE)) {
        shadow_push(a, id, m->key);
        return;
    }
    if (flags & M_NATIVE_HOOKED)
        materialize(a);
    else if (!(flags & M_NATIVE_KNOWN))
        add_pending(a, id);         /* bound right after this event, on first call */
}

JP_NOINSTR static void JNICALL on_method_exit(jvmtiEnv *env, JNIEnv *jni, jthread thread, jmethodID id,
                                              jboolean by_exception, jvalue value)
{
    struct method_slot *m = find_in(__atomic_load_n(&methods, __ATOMIC_ACQUIRE), id);
    if (!m)
        m = method_info(id);
    if (!m || !(m->flags & M_WANTED))
        return;
    uint32_t flags = m->flags;
    if (!opt.native_only) {
        /* Pushed at entry (or at its binding) unless it is an F: frame or
         * was never bound. */
        if (!(flags & M_NATIVE) || (flags & (M_NATIVE_KNOWN | M_NATIVE_HOOKED)) == M_NATIVE_KNOWN)
            jp_exit_synthetic(m->key);
        return;
    }
    struct agent_thread *a = agent_self;
    if (a && !(flags & M_NATIVE))
        shadow_pop(a, id);
}

JP_NOINSTR static void JNICALL on_native_bind(jvmtiEnv *env, JNIEnv *jni, jthread thread, jmethodID id,
                                              void *address, void **new_address)
{
    struct method_slot *m = method_info(id);
    if (!m)
        return;
    uint32_t add = M_NATIVE_KNOWN | (address_is_instrumented(address) ? M_NATIVE_HOOKED : 0);
    __atomic_fetch_or(&m->flags, add, __ATOMIC_RELEASE);
    if (!take_pending(agent_self, id))
        return;                         /* bound ahead of any call (RegisterNatives) */
    struct agent_thread *a = agent_self;
    if (!(m->flags & M_WANTED) || !collecting())
        return;
    if (!opt.native_only && !(add & M_NATIVE_HOOKED))
        jp_enter_synthetic(m->key);
    else if (opt.native_only && (add & M_NATIVE_HOOKED))
        materialize(a);
}

JP_NOINSTR static void JNICALL on_thread_start(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    learn_thread_name(thread);
}

JP_NOINSTR static void JNICALL on_thread_end(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    struct agent_thread *a = agent_self;
    if (a) {
        apply_name(a);
        free(a->stack);
        free(a);
        agent_self = NULL;
    }
}

/* ---- /tmp/perf-<pid>.map --------------------------------------------------------
 * Opened, appended to and closed per event: the program's descriptors stay
 * as they are. */
JP_NOINSTR static void perfmap_line(const void *addr, jint size, const char *name)
{
    char path[64], line[1400];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    int n = snprintf(line, sizeof line, "%lx %x %s\n", (unsigned long)(uintptr_t)addr,
                     (unsigned)size, name);
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1, line[n - 1] = '\n';
    int saved = errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        close(fd);
    }
    errno = saved;
}

JP_NOINSTR static void perfmap_start(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    int saved = errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0)
        close(fd);
    else
        opt.perfmap = 0;
    errno = saved;
}

JP_NOINSTR static void JNICALL on_compiled_load(jvmtiEnv *env, jmethodID id, jint size, const void *addr,
                                                jint map_length, const jvmtiAddrLocationMap *map,
                                                const void *compile_info)
{
    char pkg[512], name[1024], full[1600];
    int is_native;
    if (method_names(id, pkg, sizeof pkg, name, sizeof name, &is_native) != 0)
        return;
    snprintf(full, sizeof full, "%s%s%s", pkg, *pkg ? "." : "", name);
    perfmap_line(addr, size, full);
}

JP_NOINSTR static void JNICALL on_dynamic_code(jvmtiEnv *env, const char *name, const void *addr, jint size)
{
    perfmap_line(addr, size, name);
}

/* ---- start ----------------------------------------------------------------------- */
JP_NOINSTR static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
    learn_thread_name(thread);
    if (opt.perfmap) {
        (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
        (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
    }
}

/* libhookit is in the process but started another profiler, or another
 * copy of libjprof (another file): two profiles would fight over one name. */
JP_NOINSTR static int libhookit_loaded(void)
{
    return dlsym(RTLD_DEFAULT, "hookit_collecting") != NULL;
}

/* The libhookit of this agent's installation: <dir>/../libhookit.so, or
 * the loader's search when there is none (an agent copied elsewhere). */
JP_NOINSTR static void *load_libhookit(char *path, size_t size)
{
    Dl_info info;
    char self[4096];
    snprintf(path, size, "libhookit.so");
    if (dladdr((void *)&load_libhookit, &info) && info.dli_fname && realpath(info.dli_fname, self)) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        slash = strrchr(self, '/');
        if (slash) {
            snprintf(slash, sizeof self - (size_t)(slash - self), "/libhookit.so");
            if (access(self, F_OK) == 0)
                snprintf(path, size, "%s", self);
        }
    }
    return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

/* No libhookit in the process: load it.  Its start-up is the one every
 * start takes, and it starts jprof from this very file (its plugin
 * directory is this file's) unless HOOKIT_PROFILER names another.  -1 when
 * it cannot be loaded (said so). */
JP_NOINSTR static int start_through_libhookit(void)
{
    char path[4096];
    if (!load_libhookit(path, sizeof path)) {
        hk_log_write("jprof agent: cannot load %s (%s); Java methods are not recorded", path, dlerror());
        return -1;
    }
    if (jp_host)
        jp_host->debug_log("jprof agent: no libhookit in the process: loaded %s, which started jprof", path);
    return 0;
}

JP_NOINSTR static int enable(jvmtiEvent ev)
{
    return (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, ev, NULL) == JVMTI_ERROR_NONE;
}

JP_EXPORT JP_NOINSTR jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    static char optcopy[4096];
    snprintf(optcopy, sizeof optcopy, "%s", options ? options : "");
    parse_options(optcopy);
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        LOG("jprof agent: this JVM offers no JVMTI 1.2; Java methods are not recorded");
        return JNI_OK;
    }
    int joined = jp_host != NULL;
    if (!jp_host && !libhookit_loaded() && start_through_libhookit() != 0)
        return JNI_OK;
    if (!jp_host) {
        Dl_info info;
        const char *self = dladdr((void *)&Agent_OnLoad, &info) && info.dli_fname ? info.dli_fname : "?";
        hk_log_write("jprof agent: libhookit is loaded but did not start this libjprof (%s) as its "
                     "profiler; use the libjprof.so of libhookit's plugin directory (and "
                     "HOOKIT_PROFILER unset); Java methods are not recorded", self);
        return JNI_OK;
    }
    if (joined)
        jp_host->debug_log("jprof agent: joined the jprof libhookit started");

    jvmtiCapabilities caps = { 0 };
    caps.can_generate_method_entry_events = 1;
    caps.can_generate_method_exit_events = 1;
    caps.can_generate_native_method_bind_events = 1;
    caps.can_generate_compiled_method_load_events = opt.perfmap;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        LOG("jprof agent: the JVM refused the capabilities for method events; "
            "Java methods are not recorded");
        return JNI_OK;
    }
    jvmtiEventCallbacks cb = { 0 };
    cb.VMInit = on_vm_init;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.MethodEntry = on_method_entry;
    cb.MethodExit = on_method_exit;
    cb.NativeMethodBind = on_native_bind;
    cb.CompiledMethodLoad = on_compiled_load;
    cb.DynamicCodeGenerated = on_dynamic_code;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
    int ok = enable(JVMTI_EVENT_VM_INIT) &&
             enable(JVMTI_EVENT_THREAD_START) && enable(JVMTI_EVENT_THREAD_END) &&
             enable(JVMTI_EVENT_METHOD_ENTRY) && enable(JVMTI_EVENT_METHOD_EXIT) &&
             enable(JVMTI_EVENT_NATIVE_METHOD_BIND);
    if (ok && opt.perfmap) {
        perfmap_start();
        ok = enable(JVMTI_EVENT_COMPILED_METHOD_LOAD) && enable(JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    }
    if (!ok)
        LOG("jprof agent: the JVM refused some events; the profile may lack Java frames");
    return JNI_OK;
}

#endif
