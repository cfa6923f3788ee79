/*
 * Fuzz target: the JSON writer (tools/json.c) -- escaping and structure.
 *
 * The input drives the writer through a sequence of legal calls (objects,
 * arrays, keys, strings with any bytes, numbers, null); the output must be
 * valid JSON by a strict checker: strings valid UTF-8 without raw control
 * characters, only the escapes JSON allows, commas and colons in place.
 */
#include "tools/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a strict JSON checker ------------------------------------------------ */
struct cur {
    const unsigned char *p, *end;
};

static int value(struct cur *c, int depth);

static void ws(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r'))
        c->p++;
}

static int hex4(struct cur *c, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        if (c->p >= c->end)
            return -1;
        unsigned char h = *c->p++;
        v <<= 4;
        if (h >= '0' && h <= '9') v |= h - '0';
        else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
        else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
        else return -1;
    }
    *out = v;
    return 0;
}

/* One UTF-8 sequence: 0 ok, -1 invalid (overlong, surrogate, > U+10FFFF). */
static int utf8(struct cur *c)
{
    unsigned char b = *c->p;
    size_t len;
    unsigned cp;
    if (b < 0x80) { c->p++; return 0; }
    if (b >= 0xc2 && b <= 0xdf) { len = 2; cp = b & 0x1f; }
    else if (b >= 0xe0 && b <= 0xef) { len = 3; cp = b & 0x0f; }
    else if (b >= 0xf0 && b <= 0xf4) { len = 4; cp = b & 0x07; }
    else return -1;
    if ((size_t)(c->end - c->p) < len)
        return -1;
    for (size_t i = 1; i < len; i++) {
        if ((c->p[i] & 0xc0) != 0x80)
            return -1;
        cp = cp << 6 | (c->p[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff
        || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    c->p += len;
    return 0;
}

static int string(struct cur *c)
{
    if (c->p >= c->end || *c->p != '"')
        return -1;
    c->p++;
    while (c->p < c->end) {
        unsigned char b = *c->p;
        if (b == '"') {
            c->p++;
            return 0;
        }
        if (b < 0x20)
            return -1;          /* raw control character */
        if (b == '\\') {
            c->p++;
            if (c->p >= c->end)
                return -1;
            unsigned char e = *c->p++;
            unsigned u;
            if (e == 'u') {
                if (hex4(c, &u))
                    return -1;
            } else if (!strchr("\"\\/bfnrt", e) || e == 0) {
                return -1;
            }
            continue;
        }
        if (utf8(c))
            return -1;
    }
    return -1;
}

static int number(struct cur *c)
{
    const unsigned char *s = c->p;
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return -1;
    if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
        return -1;              /* leading zero */
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > s ? 0 : -1;
}

static int literal(struct cur *c, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n))
        return -1;
    c->p += n;
    return 0;
}

static int members(struct cur *c, unsigned char close, int depth, int keyed)
{
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    for (;;) {
        ws(c);
        if (keyed) {
            if (string(c))
                return -1;
            ws(c);
            if (c->p >= c->end || *c->p++ != ':')
                return -1;
        }
        if (value(c, depth + 1))
            return -1;
        ws(c);
        if (c->p >= c->end)
            return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p == close) {
            c->p++;
            return 0;
        }
        return -1;
    }
}

static int value(struct cur *c, int depth)
{
    ws(c);
    if (c->p >= c->end || depth > 10000)
        return -1;
    switch (*c->p) {
    case '{': return members(c, '}', depth, 1);
    case '[': return members(c, ']', depth, 0);
    case '"': return string(c);
    case 'n': return literal(c, "null");
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    default: return number(c);
    }
}

static int valid_json(const char *s, size_t n)
{
    struct cur c = { (const unsigned char *)s, (const unsigned char *)s + n };
    if (value(&c, 0))
        return 0;
    ws(&c);
    return c.p == c.end;
}

/* ---- driving the writer ---------------------------------------------------- */
static void invalid(const char *what, const char *out, size_t n)
{
    fprintf(stderr, "fuzz_json: %s: %.*s\n", what, (int)(n > 2000 ? 2000 : n), out);
    abort();
}

/* Take a length-prefixed chunk of the input. */
static const char *take(const uint8_t **d, size_t *left, size_t *n)
{
    if (*left == 0) {
        *n = 0;
        return "";
    }
    size_t want = **d;
    (*d)++, (*left)--;
    if (want > *left)
        want = *left;
    const char *s = (const char *)*d;
    *d += want, *left -= want;
    *n = want;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = NULL;
    size_t len = 0;

    /* 1. The whole input as one string literal. */
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return 0;
    json_write_string(f, (const char *)data, size);
    fclose(f);
    if (!valid_json(buf, len) || len < 2 || buf[0] != '"')
        invalid("json_write_string gave invalid JSON", buf, len);
    free(buf);

    /* 2. A document built by a sequence of calls chosen by the input. */
    f = open_memstream(&buf, &len);
    if (!f)
        return 0;
    struct json j;
    json_init(&j, f);
    char kinds[64];             /* per open container: 'o' object, 'a' array */
    size_t depth = 0;
    const uint8_t *d = data;
    size_t left = size;
    json_begin_array(&j);
    kinds[depth++] = 'a';
    while (left > 0) {
        uint8_t op = *d++ % 8;
        left--;
        char tmp[256];
        size_t n;
        const char *s;
        if (kinds[depth - 1] == 'o') {
            /* In an object: close it, or write a key then a value. */
            if (op == 0 && depth > 1) {
                json_end_object(&j);
                depth--;
                continue;
            }
            s = take(&d, &left, &n);
            memcpy(tmp, s, n);
            tmp[n] = 0;             /* keys are C strings */
            json_key(&j, tmp);
        } else if (op == 0 && depth > 1) {
            json_end_array(&j);
            depth--;
            continue;
        }
        switch (op) {
        case 1:
            if (depth < sizeof kinds) {
                json_begin_object(&j);
                kinds[depth++] = 'o';
            } else {
                json_null(&j);
            }
            break;
        case 2:
            if (depth < sizeof kinds) {
                json_begin_array(&j);
                kinds[depth++] = 'a';
            } else {
                json_null(&j);
            }
            break;
        case 3:
            s = take(&d, &left, &n);
            json_string_n(&j, s, n);
            break;
        case 4:
            s = take(&d, &left, &n);
            memcpy(tmp, s, n);
            tmp[n] = 0;
            json_string(&j, tmp);
            break;
        case 5: {
            uint64_t v = 0;
            for (int i = 0; i < 8 && left; i++, left--)
                v = v << 8 | *d++;
            json_u64(&j, v);
            break;
        }
        case 6: {
            uint64_t v = 0;
            for (int i = 0; i < 8 && left; i++, left--)
                v = v << 8 | *d++;
            json_i64(&j, (int64_t)v);
            break;
        }
        default:
            json_null(&j);
            break;
        }
    }
    while (depth > 0) {
        if (kinds[--depth] == 'o')
            json_end_object(&j);
        else
            json_end_array(&j);
    }
    int rc = json_finish(&j);
    fclose(f);
    if (rc != 0)
        invalid("json_finish failed", buf, len);
    if (!valid_json(buf, len))
        invalid("the JSON writer gave an invalid document", buf, len);
    free(buf);
    return 0;
}
