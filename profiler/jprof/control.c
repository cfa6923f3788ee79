/* Requests from outside the process (live readers, `hookit ctl`), carried
 * out by the profiled program's own threads at their next hook, so no agent
 * thread is needed and no thread is ever stopped from outside.
 * The live-monitoring work fills this in; for now requests are cleared. */
#include "jprof.h"

JP_NOINSTR void jp_attend(struct jp_thread *t)
{
    if (t)
        __atomic_store_n(&t->rec->request, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&jp_arena_header()->attention, 0, __ATOMIC_RELEASE);
}
