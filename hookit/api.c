/* The application API of include/hookit/hookit.h. */
#include "hookit/internal.h"
#include <hookit/hookit.h>

HK_EXPORT HK_NOINSTR void hookit_start(void)
{
    hk_init();
    if (hk_plugin.event)
        hk_set_collecting(1);
}

HK_EXPORT HK_NOINSTR void hookit_stop(void)
{
    hk_set_collecting(0);
}

HK_EXPORT HK_NOINSTR void hookit_flush(void)
{
    struct hookit_event ev = { .type = HOOKIT_EV_FLUSH };
    hk_init();
    hk_plugin_event(&ev);
}

HK_EXPORT HK_NOINSTR int hookit_collecting(void)
{
    return hk_collecting_now() != 0;
}
