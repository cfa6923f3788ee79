#include "tools/names.h"

#include <string.h>

/* Length of a "J:" / "MPI:" kind prefix of name (with the colon), or 0. */
static size_t kind_prefix(const char *name)
{
    size_t n = 0;
    while (name[n] >= 'A' && name[n] <= 'Z')
        n++;
    if (n == 0 || name[n] != ':' || name[n + 1] == ':')
        return 0;
    return n + 1;
}

void names_print_safe(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t')
            fputs("\\t", out);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

void names_print_jprof(FILE *out, const struct prof_func *f)
{
    const char *name = f->name ? f->name : "";
    const char *module = f->module ? f->module : "";
    size_t k = kind_prefix(name);
    if (k)
        fwrite(name, 1, k, out);
    else
        fputs("F:", out);
    if (*module) {
        names_print_safe(out, module, strlen(module));
        fputc('.', out);
    }
    const char *rest = name + k;
    size_t len = strlen(rest);
    names_print_safe(out, rest, len);
    if (len == 0 || rest[len - 1] != ')')
        fputs("()", out);
}

void names_print_collapsed(FILE *out, const char *const *names, uint32_t n, const char *sep)
{
    for (uint32_t i = 0; i < n; ) {
        uint32_t j = i + 1;
        while (j < n && strcmp(names[j], names[i]) == 0)
            j++;
        fprintf(out, "%s%s", i ? sep : "", names[i]);
        if (j - i > 1)
            fprintf(out, " \u00d7%u", j - i);
        i = j;
    }
}
