/* See profile/optlist.h. */
#include "profile/optlist.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static const char *valid_names(const struct optlist *spec, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < spec->n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", spec->entries[i].name);
    return buf;
}

NOINSTR void optlist_help_and_end(const struct optlist *spec, void (*log)(const char *, ...))
{
    log("%s: %s options (comma separated):", spec->plugin, spec->variable);
    for (size_t i = 0; i < spec->n; i++)
        log("%s:   %s", spec->plugin, spec->entries[i].help);
    log("%s: %s=help lists the options and ends the program before it runs (exit status 0); "
        "leave help out to profile it",
        spec->plugin, spec->variable);
    _exit(0);
}

NOINSTR static void apply_one(const struct optlist *spec, const char *item,
                              void (*log)(const char *, ...))
{
    char names[256];
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

NOINSTR int optlist_parse(const struct optlist *spec, const char *text, void (*log)(const char *, ...))
{
    char item[256];
    int help = 0;
    while (text && *text) {
        const char *end = strchr(text, ',');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        if (len >= sizeof item) {
            log("%s: %s option too long (at most %zu bytes), ignored", spec->plugin, spec->variable,
                sizeof item - 1);
        } else if (len > 0) {
            memcpy(item, text, len);
            item[len] = 0;
            if (!strcmp(item, "help"))
                help = 1; /* after the others: their own lines first */
            else
                apply_one(spec, item, log);
        }
        text = end ? end + 1 : NULL;
    }
    return help;
}
