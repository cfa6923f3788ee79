/* arena_lines [-v] ARENA_FILE: which cache lines of a (stopped) process's arena
 * each thread writes on its hot path, and whether two threads share one.
 *
 * A thread's own slots: its record, its shadow stack, its chunks of node
 * slots, and the extension slots and child indexes of its nodes.  Every
 * slot is one 64-byte line (an extension block ARENA_EXT_SLOTS of them); lines are also counted in aligned pairs (128
 * bytes), which the adjacent-line prefetcher fetches together.
 *
 * Prints one line:
 *     threads=<n> lines=<n> shared_lines=<n> shared_pairs=<n>
 * then one line per shared line or pair: "shared line|pair <index>: thread
 * <a> and thread <b>".  -v first: also "used <bytes>" (the arena's filled
 * part) and one line per thread, "thread <i>: record <ref> chunks_at <byte
 * offset of its chunk list> lines <n>" (the test makes a copy in which two
 * threads share a chunk, to see the check fail).  Exit 0 when read, 1 when the file is not an arena. */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"

#define NO_OWNER 0xffffffffu
#define MAX_NODES (1u << 22)

static const char *base;
static size_t slots;
static uint32_t *owner;             /* per slot: the thread index that owns it */
static uint32_t shared_lines, shared_pairs, lines;

static const void *at(arena_ref r) { return base + (size_t)r * ARENA_SLOT; }

static void claim(arena_ref first, uint64_t count, uint32_t thread)
{
    for (uint64_t s = first; s < (uint64_t)first + count && s < slots; s++) {
        if (owner[s] == NO_OWNER) {
            owner[s] = thread;
            lines++;
        } else if (owner[s] != thread) {
            printf("shared line %llu: thread %u and thread %u\n", (unsigned long long)s, owner[s], thread);
            shared_lines++;
        }
    }
}

/* The nodes of one tree: their extension slots and child indexes. */
static void claim_tree(arena_ref root, uint32_t thread)
{
    static arena_ref stack[MAX_NODES];
    uint32_t top = 0;
    stack[top++] = root;
    while (top) {
        const struct arena_node *n = at(stack[--top]);
        if (n->ext)
            claim(n->ext, ARENA_EXT_SLOTS, thread);
        if (n->child_index) {
            uint32_t bits = *(const arena_ref *)at(n->child_index);
            uint64_t bytes = (((uint64_t)1 << bits) + 1) * sizeof(arena_ref);
            claim(n->child_index, (bytes + ARENA_SLOT - 1) / ARENA_SLOT, thread);
        }
        for (arena_ref c = n->first_child; c && top < MAX_NODES; c = ((const struct arena_node *)at(c))->next_sibling)
            stack[top++] = c;
    }
}

static void claim_thread(const struct arena_thread *rec, arena_ref ref, uint32_t thread)
{
    claim(ref, ARENA_THREAD_SLOTS, thread);
    uint64_t stack_bytes = (uint64_t)rec->capacity * sizeof(struct arena_frame);
    claim(rec->stack, (stack_bytes + ARENA_SLOT - 1) / ARENA_SLOT, thread);
    for (arena_ref c = rec->chunks; c; c = ((const struct arena_chunk *)at(c))->next)
        claim(c, ((const struct arena_chunk *)at(c))->slots, thread);
    if (rec->root)
        claim_tree(rec->root, thread);
}

/* Pairs of lines (128 bytes) with two owners. */
static void count_pairs(void)
{
    for (size_t s = 0; s + 1 < slots; s += 2)
        if (owner[s] != NO_OWNER && owner[s + 1] != NO_OWNER && owner[s] != owner[s + 1]) {
            printf("shared pair %zu: thread %u and thread %u\n", s / 2, owner[s], owner[s + 1]);
            shared_pairs++;
        }
}

int main(int argc, char **argv)
{
    int verbose = argc == 3 && strcmp(argv[1], "-v") == 0;
    if (argc != 2 + verbose) {
        fprintf(stderr, "usage: arena_lines [-v] ARENA_FILE\n");
        return 2;
    }
    argv += verbose;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < ARENA_SLOT) {
        perror(argv[1]);
        return 1;
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    const struct arena_header *h = (const void *)base;
    if (base == MAP_FAILED || memcmp(h->magic, ARENA_MAGIC, 8) != 0) {
        fprintf(stderr, "%s: not an arena\n", argv[1]);
        return 1;
    }
    slots = h->used / ARENA_SLOT;
    if (verbose)
        printf("used %llu\n", (unsigned long long)h->used);
    owner = malloc(slots * sizeof *owner);
    memset(owner, 0xff, slots * sizeof *owner);
    uint32_t threads = 0;
    for (arena_ref r = h->first_thread; r; r = ((const struct arena_thread *)at(r))->next) {
        uint32_t before = lines;
        claim_thread(at(r), r, threads);
        if (verbose)
            printf("thread %u: record %u chunks_at %zu lines %u\n", threads, r,
                   (size_t)r * ARENA_SLOT + offsetof(struct arena_thread, chunks), lines - before);
        threads++;
    }
    count_pairs();
    printf("threads=%u lines=%u shared_lines=%u shared_pairs=%u\n", threads, lines, shared_lines, shared_pairs);
    return 0;
}
