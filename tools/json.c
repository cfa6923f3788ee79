#include "tools/json.h"

#include <stdlib.h>
#include <string.h>

void json_init(struct json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

int json_finish(struct json *j)
{
    free(j->first);
    j->first = NULL;
    return j->failed ? -1 : 0;
}

/* Before a value (or a key): the comma that separates it from the last. */
static void before_value(struct json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    if (!j->first[j->depth - 1])
        fputc(',', j->out);
    j->first[j->depth - 1] = 0;
}

static void push(struct json *j, char c)
{
    before_value(j);
    if (j->depth == j->cap) {
        size_t ncap = j->cap ? j->cap * 2 : 64;
        unsigned char *f = realloc(j->first, ncap);
        if (!f) {
            j->failed = 1;
            return;
        }
        j->first = f;
        j->cap = ncap;
    }
    j->first[j->depth++] = 1;
    fputc(c, j->out);
}

static void pop(struct json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    fputc(c, j->out);
}

void json_begin_object(struct json *j) { push(j, '{'); }
void json_end_object(struct json *j) { pop(j, '}'); }
void json_begin_array(struct json *j) { push(j, '['); }
void json_end_array(struct json *j) { pop(j, ']'); }

void json_key(struct json *j, const char *key)
{
    before_value(j);
    json_write_string(j->out, key, strlen(key));
    fputc(':', j->out);
    j->after_key = 1;
}

void json_string_n(struct json *j, const char *s, size_t n)
{
    before_value(j);
    json_write_string(j->out, s, n);
}

void json_string(struct json *j, const char *s)
{
    if (!s) {
        json_null(j);
        return;
    }
    json_string_n(j, s, strlen(s));
}

void json_u64(struct json *j, uint64_t v)
{
    before_value(j);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, int64_t v)
{
    before_value(j);
    fprintf(j->out, "%lld", (long long)v);
}

/* A number given as text: written as is when it is a JSON number
 * (-?digits[.digits][e[+-]digits], no leading zero), else as a string.
 * Returns 1 when it was written as a number. */
int json_number_text(struct json *j, const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        goto string;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            goto string;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            goto string;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p || p - s > 40)
        goto string;
    before_value(j);
    fputs(s, j->out);
    return 1;
string:
    json_string(j, s);
    return 0;
}

void json_null(struct json *j)
{
    before_value(j);
    fputs("null", j->out);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void json_write_string(FILE *out, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        switch (c) {
        case '"':  fputs("\\\"", out); i++; continue;
        case '\\': fputs("\\\\", out); i++; continue;
        case '\b': fputs("\\b", out); i++; continue;
        case '\f': fputs("\\f", out); i++; continue;
        case '\n': fputs("\\n", out); i++; continue;
        case '\r': fputs("\\r", out); i++; continue;
        case '\t': fputs("\\t", out); i++; continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            i++;
            continue;
        }
        size_t len = utf8_valid(s + i, n - i);
        if (len == 0) {
            fputs("\\ufffd", out);
            i++;
        } else {
            fwrite(s + i, 1, len, out);
            i += len;
        }
    }
    fputc('"', out);
}
