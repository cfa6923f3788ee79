#include "tools/protobuf.h"

#include <stdlib.h>
#include <string.h>

void pb_init(struct pb *b)
{
    memset(b, 0, sizeof *b);
}

void pb_free(struct pb *b)
{
    free(b->buf);
    pb_init(b);
}

void pb_reset(struct pb *b)
{
    b->len = 0;
}

static void put(struct pb *b, const void *data, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, n);
    b->len += n;
}

void pb_varint(struct pb *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put(b, tmp, n);
}

static void key(struct pb *b, uint32_t field, unsigned wire)
{
    pb_varint(b, ((uint64_t)field << 3) | wire);
}

void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
    key(b, field, 0);
    pb_varint(b, v);
}

void pb_int(struct pb *b, uint32_t field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v);     /* int64: two's complement, 10 bytes if negative */
}

void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len)
{
    key(b, field, 2);
    pb_varint(b, len);
    put(b, data, len);
}

void pb_string(struct pb *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

void pb_message(struct pb *b, uint32_t field, const struct pb *msg)
{
    if (msg->failed)
        b->failed = 1;
    pb_bytes(b, field, msg->buf ? (const void *)msg->buf : "", msg->len);
}

void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n)
{
    struct pb tmp;
    pb_init(&tmp);
    for (size_t i = 0; i < n; i++)
        pb_varint(&tmp, v[i]);
    pb_message(b, field, &tmp);
    pb_free(&tmp);
}
