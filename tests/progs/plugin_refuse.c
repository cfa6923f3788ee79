/* A plugin whose HookitStart refuses (returns non-zero): the program runs
 * unprofiled; HookitEvent and HookitFinish are never called. */
#include <stdlib.h>
#include "hookit/profiler.h"

HOOKIT_PLUGIN_ABI;

int HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin)
{
    plugin->abi_version = HOOKIT_ABI_VERSION;
    return -1;
}
void HookitEvent(const struct hookit_event *event) { abort(); }
void HookitFinish(int how) { abort(); }
