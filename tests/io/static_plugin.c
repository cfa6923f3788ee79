/* A profiler plugin linked into a static program (`hookit link -- gcc
 * -static app.c static_plugin.c`): counts the I/O and memory events of the
 * static wrappers and prints them at the end, one line on stderr:
 *   ioevents calls=N read=R written=W opens=O allocs123=A frees=F
 * (allocs123: allocations of exactly 123 bytes, the program's own). */
#include <hookit/profiler.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

HOOKIT_PLUGIN_ABI;

static unsigned long calls, rd, wr, opens, allocs123, frees;
static void *block123;

int HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin)
{
    (void)host;
    plugin->abi_version = HOOKIT_ABI_VERSION;
    plugin->caps = HOOKIT_CAP_IO | HOOKIT_CAP_ALLOC;
    plugin->name = "static-test";
    return 0;
}

void HookitEvent(const struct hookit_event *ev)
{
    if (ev->type == HOOKIT_EV_IO && ev->io) {
        const struct hookit_io *io = ev->io;
        if (io->path && strstr(io->path, "static.dat") == NULL)
            return;
        calls++;
        if (io->op == HOOKIT_IO_READ)
            rd += io->bytes;
        else if (io->op == HOOKIT_IO_WRITE)
            wr += io->bytes;
        else if (io->op == HOOKIT_IO_OPEN && !(io->flags & HOOKIT_IOF_FAILED))
            opens++;
    } else if (ev->type == HOOKIT_EV_ALLOC && ev->mem->size == 123) {
        allocs123++;
        block123 = ev->mem->ptr;
    } else if (ev->type == HOOKIT_EV_FREE && ev->mem->ptr == block123) {
        frees++;
    }
}

void HookitFinish(int how)
{
    (void)how;
    char line[256];
    int n = snprintf(line, sizeof line, "ioevents calls=%lu read=%lu written=%lu opens=%lu "
                     "allocs123=%lu frees=%lu\n", calls, rd, wr, opens, allocs123, frees);
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}
