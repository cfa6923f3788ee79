/* Samples placed by the function their program counter is in.
 *
 * A sample is charged to the thread's current node: the function whose
 * entry hook ran last without its exit.  The code of a function before its
 * entry hook (its prologue) and after its exit hook is not inside that
 * window, and GCC and Clang put the whole body of a small function there:
 * bench/phases.c's tiny_leaf computes after its exit hook returns, fmt's
 * base() likewise, so their samples went to their callers (perf on the
 * same build gave base() 5.7% of the time, hookit 0).
 *
 * The handler cannot tell which function a program counter is in, so it
 * also counts each sample under (program counter, current node) in a small
 * per-thread table.  When the profile is built, every counter whose program
 * counter lies in a function other than its node's is moved to the node's
 * child for that function, if the node has one: the call the prologue or
 * epilogue belongs to.  Anything else stays where it was charged: a
 * library's code (folded into its innermost instrumented caller, as perf's
 * figures are read), a function the node never called, code before a
 * node's first call.  Live readers, which read the arena's counts only, see
 * the samples where they were charged.
 *
 * The table is 1,024 entries of 16 bytes (16 KiB, mapped when the thread
 * starts); a sample that finds no room in 8 probes is left where it
 * was charged, and the profile counts such samples (pc_samples_unplaced).
 * A reset or zerobase clears the table with the tree. */
#include "profiler/jprof/jprof.h"
#include "sampler.h"
#include "common/pages.h"

#include <string.h>

#define PC_TABLE_BITS 10
#define PC_TABLE_SIZE (1u << PC_TABLE_BITS)
#define PC_PROBES 8

struct jp_pc_entry {
    uint64_t pc;
    arena_ref node;
    uint32_t count;
};

struct jp_pc_table {
    struct jp_pc_entry e[PC_TABLE_SIZE];
};

JP_NOINSTR static uint32_t pc_slot(uint64_t pc, arena_ref node)
{
    return (uint32_t)(((pc ^ ((uint64_t)node << 20)) * 0x9e3779b97f4a7c15ull) >> (64 - PC_TABLE_BITS));
}

/* In the sampling signal handler (the table was mapped when the thread
 * started: no mmap here, which libhookit's wrappers would see). */
JP_NOINSTR void jp_pc_sample(struct jp_thread *t, uint64_t pc, arena_ref node, uint64_t n)
{
    if (!t->pc_table) {
        t->pc_unplaced += n;
        return;
    }
    struct jp_pc_entry *e = t->pc_table->e;
    for (uint32_t i = pc_slot(pc, node), k = 0; k < PC_PROBES; k++, i = (i + 1) & (PC_TABLE_SIZE - 1)) {
        if (e[i].count && (e[i].pc != pc || e[i].node != node))
            continue;
        e[i].pc = pc;
        e[i].node = node;
        e[i].count += (uint32_t)n;
        return;
    }
    t->pc_unplaced += n;
}

/* At a thread's start (the table mapped once per thread state, kept when
 * the state is recycled) and at a reset or zerobase. */
JP_NOINSTR void jp_pc_samples_clear(struct jp_thread *t)
{
    if (!t->pc_table && jp_opt.sample)
        t->pc_table = hk_pages_map(sizeof *t->pc_table, 0);
    else if (t->pc_table)
        memset(t->pc_table, 0, sizeof *t->pc_table);
    t->pc_unplaced = 0;
}

/* A copy's node index by arena reference: an open table over the copy. */
struct by_ref {
    uint32_t *slot; /* node index + 1, 0 empty */
    uint32_t mask;
};

JP_NOINSTR static uint32_t ref_hash(arena_ref ref, uint32_t mask)
{
    return (uint32_t)(((uint64_t)ref * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

JP_NOINSTR static uint32_t find_index(const struct by_ref *m, const struct arena_copy_node *nodes,
                                      arena_ref ref)
{
    for (uint32_t i = ref_hash(ref, m->mask); m->slot[i]; i = (i + 1) & m->mask)
        if (nodes[m->slot[i] - 1].ref == ref)
            return m->slot[i] - 1;
    return UINT32_MAX;
}

/* The child of node `parent` for function fn, by the children lists. */
JP_NOINSTR static uint32_t child_for(const uint32_t *first, const uint32_t *next,
                                     const struct arena_copy_node *nodes, uint32_t parent, uint64_t fn)
{
    for (uint32_t c = first[parent]; c != UINT32_MAX; c = next[c])
        if (nodes[c].fn == fn)
            return c;
    return UINT32_MAX;
}

JP_NOINSTR int jp_pc_samples_place(const struct jp_thread *t, struct arena_copy_node *nodes, uint32_t n,
                                   uint64_t (*function_of)(uint64_t pc))
{
    if (!t || !t->pc_table || !n)
        return 0;
    uint32_t size = 1;
    while (size < 2 * n)
        size <<= 1;
    struct by_ref m = { hk_pages_map(size * sizeof *m.slot, 0), size - 1 };
    uint32_t *first = hk_pages_map(2 * (size_t)n * sizeof *first, 0), *next = first ? first + n : NULL;
    if (!m.slot || !first) {
        hk_pages_unmap(m.slot, size * sizeof *m.slot);
        hk_pages_unmap(first, 2 * (size_t)n * sizeof *first);
        return -1;
    }
    memset(first, 0xff, 2 * (size_t)n * sizeof *first);
    for (uint32_t i = n; i-- > 0;) {
        uint32_t s = ref_hash(nodes[i].ref, m.mask);
        while (m.slot[s])
            s = (s + 1) & m.mask;
        m.slot[s] = i + 1;
        if (nodes[i].parent < i) {
            next[i] = first[nodes[i].parent];
            first[nodes[i].parent] = i;
        }
    }
    /* Another thread's table changes under us (its handler counts on):
     * each entry is read once; a count read a sample late moves that much
     * less, and never more than its node holds. */
    const struct jp_pc_entry *e = t->pc_table->e;
    for (uint32_t k = 0; k < PC_TABLE_SIZE; k++) {
        uint32_t count = __atomic_load_n(&e[k].count, __ATOMIC_RELAXED);
        if (!count)
            continue;
        uint32_t at = find_index(&m, nodes, __atomic_load_n(&e[k].node, __ATOMIC_RELAXED));
        uint64_t fn = at == UINT32_MAX ? 0 : function_of(__atomic_load_n(&e[k].pc, __ATOMIC_RELAXED));
        if (!fn || fn == nodes[at].fn)
            continue;
        uint32_t to = child_for(first, next, nodes, at, fn);
        uint64_t moved = count < nodes[at].samples ? count : nodes[at].samples;
        if (to == UINT32_MAX || !moved)
            continue;
        nodes[at].samples -= moved;
        nodes[to].samples += moved;
    }
    hk_pages_unmap(m.slot, size * sizeof *m.slot);
    hk_pages_unmap(first, 2 * (size_t)n * sizeof *first);
    return 0;
}
