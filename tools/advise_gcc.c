/* hookit advise: GCC's exclude lists (tools/advise.h).
 *
 * GCC leaves a function uninstrumented when any entry of
 * -finstrument-functions-exclude-function-list is a substring of its
 * printable name, or any entry of -finstrument-functions-exclude-file-list
 * a substring of the file it is defined in (gcc/gimplify.cc,
 * flag_instrument_functions_exclude_p).  So "get" also drops get_value, and
 * "mem.h" also drops every function of zstd_mem.h: an entry is only written
 * when it matches nothing in the profile that stays instrumented. */
#include "tools/advise.h"

#include <string.h>

int advise_is_header(const char *file)
{
    static const char *const ext[] = { ".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".tcc", ".ipp" };
    const char *base = advise_file_token(file), *dot = strrchr(base, '.');
    if (!dot)
        return *base != '\0'; /* <vector>, <memory>: C++'s headers have no extension */
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
        if (!strcmp(dot, ext[i]))
            return 1;
    return 0;
}

/* The base name: the one part of the path GCC is sure to have in the
 * function's DECL_SOURCE_FILE whatever -I or relative path reached it. */
const char *advise_file_token(const char *file)
{
    const char *slash = strrchr(file, '/');
    return slash ? slash + 1 : file;
}

int advise_listable(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s == ',' || *s == ' ' || *s == '\t' || *s == '\'' || *s == '"' || *s == '\\' || *s == '$'
            || *s == '`')
            return 0;
    return 1;
}

/* Every function of the header fns[i] is in, when none of them must stay:
 * the file's token must match no file of a function on a top path. */
static int drop_by_file(struct advise *a, size_t i)
{
    struct advise_fn *f = &a->fns[i];
    const char *token = advise_file_token(f->file);
    if (f->files_differ || !advise_is_header(f->file) || !advise_listable(token))
        return 0;
    for (size_t k = 0; k < a->nfns; k++)
        if (a->fns[k].on_top_path && a->fns[k].file && strstr(a->fns[k].file, token)) {
            f->clash = a->fns[k].name;
            f->why_not = "its header's name is part of the file of, on a top path,";
            return 0;
        }
    for (size_t k = 0; k < a->nfns; k++)
        if (a->fns[k].how == ADVISE_KEEP && a->fns[k].file && strstr(a->fns[k].file, token)) {
            a->fns[k].how = ADVISE_BY_FILE;
            a->fns[k].token = token;
        }
    return 1;
}

/* fns[i] by its name.  Every other function whose name holds it goes
 * with it (GCC would drop it too), so none may be on a top path; they are
 * marked dropped, by the same entry, so the list says what it costs.  The
 * full name is matched: GCC's printable name is a part of it. */
static int drop_by_name(struct advise *a, size_t i)
{
    struct advise_fn *f = &a->fns[i];
    if (!advise_listable(f->key)) {
        f->why_not = "its name cannot be written in GCC's comma-separated list";
        return 0;
    }
    for (size_t k = 0; k < a->nfns; k++)
        if (k != i && a->fns[k].on_top_path && strstr(a->fns[k].name, f->key)) {
            f->clash = a->fns[k].name;
            f->why_not = "its name is part of the name of, on a top path,";
            return 0;
        }
    for (size_t k = 0; k < a->nfns; k++)
        if (k == i || (a->fns[k].how == ADVISE_KEEP && strstr(a->fns[k].name, f->key))) {
            a->fns[k].how = ADVISE_BY_NAME;
            a->fns[k].token = f->key;
            a->fns[k].why_not = a->fns[k].clash = NULL;
        }
    return 1;
}

int advise_try_drop(struct advise *a, size_t i)
{
    struct advise_fn *f = &a->fns[i];
    if (f->file && drop_by_file(a, i))
        return 1;
    return drop_by_name(a, i);
}

/* "FLAG=t1,t2" for the tokens of every function dropped that way, each
 * once; 1 when something was written. */
static int exclude_list(FILE *out, const struct advise *a, enum advise_how how, const char *flag, int written)
{
    int n = 0;
    for (size_t i = 0; i < a->nfns; i++) {
        int seen = a->fns[i].how != how;
        for (size_t k = 0; k < i && !seen; k++)
            seen = a->fns[k].how == how && !strcmp(a->fns[k].token, a->fns[i].token);
        if (seen)
            continue;
        if (n++ == 0)
            fprintf(out, "%s%s%s", written ? " " : "", flag, a->fns[i].token);
        else
            fprintf(out, ",%s", a->fns[i].token);
    }
    return n > 0;
}

int advise_gcc_flags(FILE *out, const struct advise *a)
{
    int written = exclude_list(out, a, ADVISE_BY_FILE, "-finstrument-functions-exclude-file-list=", 0);
    written |= exclude_list(out, a, ADVISE_BY_NAME, "-finstrument-functions-exclude-function-list=", written);
    if (written)
        fputc('\n', out);
    return written;
}
