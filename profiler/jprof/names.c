/* Names for the function table, through A2N.  The A2N view of the process
 * is opened at start and re-read on dlopen/dlclose, so a library that was
 * closed before the end still names its functions. */
#include "jprof.h"
#include "profile/profile.h"
#include <hookit/a2n.h>

#include <stdio.h>

static struct a2n *a2n;

JP_NOINSTR void jp_names_start(void)
{
    a2n = a2n_open(0);
}

JP_NOINSTR void jp_names_reload(void)
{
    if (a2n)
        a2n_reload(a2n);
}

JP_NOINSTR int jp_resolve_names(struct profile *p)
{
    if (!a2n)
        a2n = a2n_open(0);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        struct prof_func *f = &p->funcs[i];
        struct a2n_result r;
        char fallback[32];
        const char *sname, *smodule;
        if (jp_synthetic_name(f->addr, &sname, &smodule)) {
            r = (struct a2n_result){ .module = smodule, .function = sname };
        } else if (a2n) {
            a2n_lookup(a2n, f->addr, jp_opt.lines, &r);
        } else {
            snprintf(fallback, sizeof fallback, "0x%llx", (unsigned long long)f->addr);
            r = (struct a2n_result){ .module = "[unknown]", .function = fallback };
        }
        f->name = profile_intern(p, r.function ? r.function : "?");
        f->module = profile_intern(p, r.module ? r.module : "");
        f->file = r.file ? profile_intern(p, r.file) : NULL;
        f->line = r.line;
        if (!f->name || !f->module)
            return -1;
    }
    return 0;
}
