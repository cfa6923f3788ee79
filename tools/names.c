#include "tools/names.h"

#include <hookit/a2n.h>
#include <stdlib.h>
#include <string.h>

enum names_demangle names_demangle = DEMANGLE_SIMPLE;
int names_show_lines;

int names_parse_demangle(const char *mode)
{
    static const char *const modes[] = { [DEMANGLE_SIMPLE] = "simple", [DEMANGLE_FULL] = "full",
                                         [DEMANGLE_NO] = "no" };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(mode, modes[i])) {
            names_demangle = (enum names_demangle)i;
            return 0;
        }
    return -1;
}

/* The display names of the profile being reported (names_use_profile). */
static const struct profile *shown;
static char **display;
static uint32_t ndisplay;

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

/* A C++ signature ends with ')' and perhaps qualifiers: "f(int) const". */
static int has_signature(const char *name, size_t len)
{
    static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
    for (int again = 1; again && len; ) {
        again = 0;
        for (size_t q = 0; q < sizeof quals / sizeof quals[0]; q++) {
            size_t ql = strlen(quals[q]);
            if (len > ql && memcmp(name + len - ql, quals[q], ql) == 0) {
                len -= ql;
                again = 1;
                break;
            }
        }
    }
    return len && name[len - 1] == ')';
}

const char *names_display(const struct prof_func *f)
{
    if (shown && f >= shown->funcs && f < shown->funcs + ndisplay && display[f - shown->funcs])
        return display[f - shown->funcs];
    return f->name ? f->name : "";
}

void names_print_jprof(FILE *out, const struct prof_func *f)
{
    const char *name = names_display(f);
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
    if (names_demangle != DEMANGLE_NO && !has_signature(rest, len))
        fputs("()", out);
    if (names_show_lines && f->file && *f->file) {
        fputs(" (", out);
        names_print_safe(out, f->file, strlen(f->file));
        fprintf(out, ":%u)", f->line);
    }
}

/* ---- the simple form of C++ names ------------------------------------------------ */

/* The operator token at p (after "operator"), longest first; its length or 0. */
static size_t operator_token(const char *p)
{
    static const char *const ops[] = { "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==",
                                       "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=",
                                       "&=", "|=", "^=", "->", "()", "[]", "<", ">", "+", "-", "*",
                                       "/", "%", "^", "&", "|", "~", "!", "=", "," };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strncmp(p, ops[i], strlen(ops[i])) == 0)
            return strlen(ops[i]);
    return 0;
}

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* name without the template argument lists nested deeper than keep
 * levels (0: all of them dropped; operator<, operator-> kept). */
static char *strip_templates(const char *name, int keep)
{
    size_t len = strlen(name), o = 0;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    int depth = 0;
    for (size_t i = 0; i < len; ) {
        if (strncmp(name + i, "operator", 8) == 0 && (i == 0 || !word_char(name[i - 1]))) {
            size_t t = operator_token(name + i + 8);
            if (depth <= keep) {
                memcpy(out + o, name + i, 8 + t);
                o += 8 + t;
            }
            i += 8 + t;
            continue;
        }
        char c = name[i++];
        if (c == '<')
            depth++;
        if (c == '<' && depth == keep + 1 && o > 0 && out[o - 1] == ' ')
            o--; /* "operator< <T>(...)": "operator<(...)" */
        if (c == '>' && depth <= keep && o > 0 && out[o - 1] == ' ')
            o--; /* "pair<node >" from "pair<node<T> >" */
        if (depth <= keep)
            out[o++] = c;
        if (c == '>' && depth > 0)
            depth--;
    }
    out[o] = '\0';
    return out;
}

/* Where the parameter list of s starts (its last top-level "(...)"), or
 * strlen(s) when it has none. */
static size_t params_start(const char *s)
{
    size_t len = strlen(s), start = len;
    int depth = 0;
    size_t open = 0;
    for (size_t i = 0; i < len; i++) {
        /* s[i - 1] is inside the string: 0 < i < strlen(s). */
        // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): see above
        if (strncmp(s + i, "operator", 8) == 0 && (i == 0 || !word_char(s[i - 1]))) {
            i += 7 + operator_token(s + i + 8);
            continue;
        }
        if (s[i] == '(') {
            if (depth++ == 0)
                open = i;
        } else if (s[i] == ')' && depth > 0 && --depth == 0) {
            start = open;
        }
    }
    return start;
}

/* s[0..n) without a leading return type: what follows its last top-level
 * space that does not belong to "operator new", "operator int", ... */
static const char *skip_return_type(const char *s, size_t n)
{
    int depth = 0;
    const char *from = s;
    for (size_t i = 0; i < n; i++) {
        /* template arguments kept ("map<int, int>") hold spaces too */
        if (strncmp(s + i, "operator", 8) == 0 && (i == 0 || !word_char(s[i - 1]))
            && (s[i + 8] == '<' || s[i + 8] == '>' || s[i + 8] == '-')) {
            i += 7 + operator_token(s + i + 8);
            continue;
        }
        if (s[i] == '(' || s[i] == '<')
            depth++;
        else if ((s[i] == ')' || s[i] == '>') && depth > 0)
            depth--;
        else if (s[i] == ' ' && depth == 0) {
            int op = (i >= 8 && strncmp(s + i - 8, "operator", 8) == 0) ||
                     (i >= 10 && strncmp(s + i - 10, "operator\"\"", 10) == 0);
            if (!op)
                from = s + i + 1;
        }
    }
    return from;
}

/* The end of the parenthesised group that opens at s[i] (after its ')'),
 * or 0 when it does not close. */
static size_t group_end(const char *s, size_t i)
{
    int depth = 0;
    for (; s[i]; i++) {
        if (s[i] == '(')
            depth++;
        else if (s[i] == ')' && --depth == 0)
            return i + 1;
    }
    return 0;
}

/* After a parameter list, the qualifiers of a member function. */
static size_t skip_qualifiers(const char *s, size_t i)
{
    static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
    for (int again = 1; again;) {
        again = 0;
        for (size_t q = 0; q < sizeof quals / sizeof *quals; q++)
            if (!strncmp(s + i, quals[q], strlen(quals[q]))) {
                i += strlen(quals[q]);
                again = 1;
            }
    }
    return i;
}

/* For the in-place rewrites below (s[*i] read, s[*o] written, *o <= *i):
 * an "operator" token at s[*i] is copied whole, its '(' or '<' no
 * bracket.  1 when it was one. */
static int copy_operator(char *s, size_t *o, size_t *i)
{
    if (strncmp(s + *i, "operator", 8) != 0 || (*i > 0 && word_char(s[*i - 1])))
        return 0;
    size_t t = 8 + operator_token(s + *i + 8);
    memmove(s + *o, s + *i, t);
    *o += t;
    *i += t;
    return 1;
}

/* In place: the parameter lists of enclosing functions dropped, those of
 * a local class's or a lambda's function ("find(int, char const*)::State::
 * Match" -> "find::State::Match"), and a lambda's own
 * ("{lambda(int const&)#1}" -> "{lambda#1}"): the function's own list,
 * the last, stays for params_start.  "(anonymous namespace)" is a scope:
 * it reads "(anon)". */
static void drop_enclosing_params(char *s)
{
    size_t o = 0, len = strlen(s);
    for (size_t i = 0; i < len;) {
        if (copy_operator(s, &o, &i))
            continue;
        if (s[i] == '(' && !strncmp(s + i, "(anonymous namespace)", 21)) {
            memcpy(s + o, "(anon)", 6); /* a scope, not a parameter list: short */
            o += 6;
            i += 21;
            continue;
        }
        if (s[i] == '(') {
            size_t end = group_end(s, i);
            size_t after = end ? skip_qualifiers(s, end) : 0;
            int lambda = o >= 7 && !strncmp(s + o - 7, "{lambda", 7);
            if (end && (lambda || !strncmp(s + after, "::", 2))) {
                i = lambda ? end : after; /* "find(...) const::X" -> "find::X" */
                continue;
            }
        }
        s[o++] = s[i++];
    }
    s[o] = '\0';
}

/* In place: inside template argument and parameter lists, names without
 * their scope ("write(fmt::v9::appender, fmt::v9::basic_format_specs const&)"
 * -> "write(appender, basic_format_specs const&)"); the function's own
 * scope stays. */
static void unqualify_inside(char *s)
{
    size_t o = 0, len = strlen(s), word = 0;
    int depth = 0;
    for (size_t i = 0; i < len;) {
        if (copy_operator(s, &o, &i)) {
            word = o;
            continue;
        }
        char c = s[i];
        if (c == '<' || c == '(')
            depth++;
        else if ((c == '>' || c == ')') && depth > 0)
            depth--;
        if (depth > 0 && c == ':' && s[i + 1] == ':' && o > word) {
            o = word; /* drop "scope::" */
            i += 2;
            continue;
        }
        s[o++] = s[i++];
        if (!word_char(c))
            word = o;
    }
    s[o] = '\0';
}

/* The simple form: no return type, template arguments or parameters
 * ("Walker::Iterate"); with keep_params the parameters stay
 * ("twice(double)"), with keep_templates the template arguments of that
 * many levels ("forward<pair>(remove_reference<pair>::type&)"); a
 * negative keep_templates, -1 - levels, makes the short form of the same
 * (names inside the lists without their scope).
 * malloc'ed, or NULL. */
static char *simple_name(const char *full, int keep_params, int keep_templates)
{
    char *t = strip_templates(full, keep_templates < 0 ? -keep_templates - 1 : keep_templates);
    if (!t)
        return NULL;
    drop_enclosing_params(t);
    if (keep_templates < 0) /* a short form: names inside without their scope */
        unqualify_inside(t);
    size_t ps = params_start(t);
    const char *from = skip_return_type(t, ps);
    size_t end = keep_params ? strlen(t) : ps;
    if (end <= (size_t)(from - t)) {
        free(t);
        return strdup(full);
    }
    char *out = strndup(from, end - (size_t)(from - t));
    free(t);
    return out;
}

char *names_simple(const char *name)
{
    return strpbrk(name, "<(") && !kind_prefix(name) ? simple_name(name, 0, 0) : strdup(name);
}

/* "_GLOBAL__sub_I_X" and "_GLOBAL__sub_D_X", the static initialiser and
 * finaliser GCC and clang make per file, read as c++filt reads the older
 * form of the same symbols ("_GLOBAL__I_X", which libiberty demangles and
 * "_GLOBAL__sub_I_X" it leaves alone): "global constructors keyed to X",
 * X demangled when mangled. */
char *names_static_initializer(const char *name)
{
    static const char prefix[] = "_GLOBAL__sub_";
    if (!name || strncmp(name, prefix, sizeof prefix - 1) != 0)
        return NULL;
    const char *kind = name + sizeof prefix - 1;
    if ((kind[0] != 'I' && kind[0] != 'D') || kind[1] != '_' || !kind[2])
        return NULL;
    const char *key = kind + 2;
    char *dm = strncmp(key, "_Z", 2) == 0 ? a2n_demangle(key) : NULL;
    const char *k = dm ? dm : key;
    char *out = malloc(strlen(k) + 32);
    if (out)
        sprintf(out, "global %s keyed to %s", kind[0] == 'I' ? "constructors" : "destructors", k);
    free(dm);
    return out;
}

int names_read_static_initializers(struct profile *p)
{
    if (names_demangle == DEMANGLE_NO)
        return 0; /* export --demangle=no: the symbols as stored */
    for (uint32_t f = 0; p && f < p->nfuncs; f++) {
        char *readable = names_static_initializer(p->funcs[f].name);
        if (!readable)
            continue;
        const char *in = profile_intern(p, readable);
        free(readable);
        if (!in)
            return -1;
        p->funcs[f].name = in;
    }
    return 0;
}

static void free_display(void)
{
    for (uint32_t i = 0; i < ndisplay; i++)
        free(display[i]);
    free(display);
    display = NULL;
    ndisplay = 0;
    shown = NULL;
}

static const char *shown_name(const struct profile *p, uint32_t f)
{
    return display[f] ? display[f] : p->funcs[f].name ? p->funcs[f].name : "";
}

static int by_shown(const void *va, const void *vb, void *vp)
{
    const struct profile *p = vp;
    uint32_t a = *(const uint32_t *)va, b = *(const uint32_t *)vb;
    const char *ma = p->funcs[a].module ? p->funcs[a].module : "";
    const char *mb = p->funcs[b].module ? p->funcs[b].module : "";
    int c = strcmp(ma, mb);
    return c ? c : strcmp(shown_name(p, a), shown_name(p, b));
}

void names_use_profile(const struct profile *p)
{
    free_display();
    if (!p || !p->nfuncs || names_demangle == DEMANGLE_NO)
        return;
    display = calloc(p->nfuncs, sizeof *display);
    if (!display)
        return;                 /* names as stored */
    ndisplay = p->nfuncs;
    shown = p;
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        const char *name = p->funcs[f].name ? p->funcs[f].name : "";
        display[f] = names_static_initializer(name);
        if (!display[f] && names_demangle == DEMANGLE_SIMPLE && !kind_prefix(name)
            && strpbrk(name, "<("))
            display[f] = simple_name(name, 0, 0);
    }
    if (names_demangle != DEMANGLE_SIMPLE)
        return;
    /* Overloads and instantiations that the simple form makes equal keep
     * their parameters, else their outer template arguments instead, else
     * both, each first with the names inside them short (no scope), then
     * in full (std::forward's instantiations differ only there: the full name
     * can be 500 characters), else every template argument (still no
     * return type), and the full name when that is not enough: sort by
     * (module, shown name) and look at neighbours.  Each pass takes the
     * shortest form that tells the functions apart. */
    static const struct {
        int params, templates;
    } pass_form[] = {
        { 1, -1 }, { 0, -2 }, { 1, -2 }, { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, 1000 },
    };
    enum { NPASS = sizeof pass_form / sizeof *pass_form };
    uint32_t *order = malloc(p->nfuncs * sizeof *order);
    if (!order)
        return;
    for (int pass = 0; pass <= NPASS; pass++) {
        for (uint32_t f = 0; f < p->nfuncs; f++)
            order[f] = f;
        qsort_r(order, p->nfuncs, sizeof *order, by_shown, (void *)p);
        for (uint32_t i = 0; i < p->nfuncs; ) {
            uint32_t j = i + 1;
            while (j < p->nfuncs && by_shown(&order[i], &order[j], (void *)p) == 0)
                j++;
            int differ = 0;
            for (uint32_t k = i + 1; k < j; k++)
                differ |= strcmp(p->funcs[order[k]].name ? p->funcs[order[k]].name : "",
                                 p->funcs[order[i]].name ? p->funcs[order[i]].name : "") != 0;
            for (uint32_t k = i; k < j && differ; k++) {
                uint32_t f = order[k];
                if (!display[f])
                    continue;
                free(display[f]);
                display[f] = pass < NPASS
                    ? simple_name(p->funcs[f].name, pass_form[pass].params, pass_form[pass].templates)
                    : NULL;
            }
            i = j;
        }
    }
    free(order);
}

int names_apply_display(struct profile *p)
{
    names_use_profile(p);
    int rc = 0;
    for (uint32_t f = 0; rc == 0 && f < p->nfuncs; f++) {
        const char *shown_as = names_display(&p->funcs[f]);
        if (shown_as == p->funcs[f].name)
            continue;
        const char *in = profile_intern(p, shown_as);
        if (in)
            p->funcs[f].name = in;
        else
            rc = -1;
    }
    names_use_profile(NULL);
    return rc;
}

void names_print_collapsed(FILE *out, const char *const *names, uint32_t n, const char *sep)
{
    for (uint32_t i = 0; i < n; ) {
        uint32_t j = i + 1;
        while (j < n && strcmp(names[j], names[i]) == 0)
            j++;
        if (i)
            fputs(sep, out);
        names_print_safe(out, names[i], strlen(names[i]));
        if (j - i > 1)
            fprintf(out, " \u00d7%u", j - i);
        i = j;
    }
}
