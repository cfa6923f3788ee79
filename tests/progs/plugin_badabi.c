/* A plugin built for another ABI: libhookit must refuse it before calling
 * any of its code (HookitStart would abort the program). */
#include <stdint.h>
#include <stdlib.h>
#include "hookit/profiler.h"

__attribute__((visibility("default"))) const uint32_t HookitAbiVersion = HOOKIT_ABI_VERSION + 100;

int HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin) { abort(); }
void HookitEvent(const struct hookit_event *event) { abort(); }
void HookitFinish(int how) { abort(); }
