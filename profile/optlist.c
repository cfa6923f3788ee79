/* See profile/optlist.h. */
#include "profile/optlist.h"

#include <stdio.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static const char *valid_names(const struct optlist *spec, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < spec->n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", spec->entries[i].name);
    return buf;
}

NOINSTR static void apply_one(const struct optlist *spec, const char *item,
                              void (*log)(const char *, ...))
{
    char names[256];
    if (!strcmp(item, "help")) {
        log("%s: %s options (comma separated):", spec->plugin, spec->variable);
        for (size_t i = 0; i < spec->n; i++)
            log("%s:   %s", spec->plugin, spec->entries[i].help);
        return;
    }
    const char *eq = strchr(item, '=');
    size_t key_len = eq ? (size_t)(eq - item) + 1 : strlen(item);
    for (size_t i = 0; i < spec->n; i++) {
        const struct optlist_entry *o = &spec->entries[i];
        if (strlen(o->name) != key_len || strncmp(o->name, item, key_len))
            continue;
        if (o->apply(eq ? eq + 1 : "") != 0)
            log("%s: bad value in %s option '%.80s'; expected %s", spec->plugin, spec->variable,
                item, o->help);
        return;
    }
    log("%s: unknown option '%.80s' in %s; valid options: %s, help", spec->plugin, item,
        spec->variable, valid_names(spec, names, sizeof names));
}

NOINSTR void optlist_parse(const struct optlist *spec, const char *text, void (*log)(const char *, ...))
{
    char item[256];
    while (text && *text) {
        const char *end = strchr(text, ',');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        if (len >= sizeof item) {
            log("%s: %s option too long (at most %zu bytes), ignored", spec->plugin, spec->variable,
                sizeof item - 1);
        } else if (len > 0) {
            memcpy(item, text, len);
            item[len] = 0;
            apply_one(spec, item, log);
        }
        text = end ? end + 1 : NULL;
    }
}
