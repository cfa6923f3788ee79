/* Functions of modules that are not instrumented, seen through copies
 * inlined into modules that are.  libstdc++ is not built with
 * -finstrument-functions, but the program's inlined copies of
 * `std::string::size()` call the hooks with the function's address, and
 * std::string's members are explicitly instantiated in libstdc++ (an
 * `extern template`), so that address is libstdc++'s exported copy: A2N
 * names the module libstdc++.so.6.0.30 for code that ran in the program.
 *
 * Such a node belongs to the module of the code it was inlined into: its
 * parent's (inlined copies nest like real calls under their host), taken up
 * the tree through inlined callers of inlined callers.  A function inlined
 * into two modules becomes one function per module (the same name), so each
 * module's share stays its own.  The copy has no address (0): its code is
 * spread over its hosts, and the address seen is another module's. */
#include "profile/inlined.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Function f as shown in module m: f itself, or its copy for m (made on
 * first need).  The copies are few: a short list searched linearly. */
struct copies {
    struct copy { uint32_t func; const char *module; uint32_t index; } *v;
    uint32_t n, cap;
    uint32_t funcs_room;        /* p->funcs has room for this many */
};

static int64_t copy_for(struct profile *p, struct copies *c, uint32_t f, const char *module)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->v[i].func == f && c->v[i].module == module)
            return c->v[i].index;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 16;
        struct copy *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    /* profile_alloc has no realloc: a new table each time the old is full
     * (its memory stays in the profile's arena until profile_free). */
    if (p->nfuncs == c->funcs_room) {
        uint32_t room = p->nfuncs + p->nfuncs / 2 + 16;
        struct prof_func *funcs = profile_alloc(p, (size_t)room * sizeof *funcs);
        if (!funcs)
            return -1;
        memcpy(funcs, p->funcs, (size_t)p->nfuncs * sizeof *funcs);
        p->funcs = funcs;
        c->funcs_room = room;
    }
    uint32_t index = p->nfuncs++;
    p->funcs[index] = p->funcs[f];
    p->funcs[index].module = module;
    p->funcs[index].addr = 0;   /* none in that module: the code is in its hosts */
    c->v[c->n++] = (struct copy){ f, module, index };
    return index;
}

int profile_attribute_inlined(struct profile *p, const unsigned char *foreign)
{
    uint32_t nfuncs = p->nfuncs;                /* foreign[] covers these */
    struct copies copies = { .funcs_room = nfuncs };
    int rc = 0;
    for (uint32_t t = 0; t < p->nthreads && rc == 0; t++) {
        struct prof_thread *th = &p->threads[t];
        /* The module each node's code ran in; parents precede children. */
        const char **host = malloc(((size_t)th->nnodes + 1) * sizeof *host);
        if (!host) {
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < th->nnodes && rc == 0; i++) {
            struct prof_node *n = &th->nodes[i];
            const struct prof_func *f = &p->funcs[n->func];
            host[i] = f->module;
            if (n->func >= nfuncs || !foreign[n->func] || n->parent == PROF_NONE ||
                host[n->parent] == f->module)
                continue;
            host[i] = host[n->parent];
            int64_t k = copy_for(p, &copies, n->func, host[i]);
            if (k < 0)
                rc = -1;
            else
                n->func = (uint32_t)k;
        }
        free(host);
    }
    free(copies.v);
    return rc;
}
