/*
 * A minimal protocol-buffer encoder, enough to write pprof's profile.proto
 * (tools/fmt_pprof.c): varints, length-delimited fields and packed repeated
 * varints into growable buffers.  A message is built in its own buffer and
 * appended to its parent as a length-delimited field.
 */
#ifndef HOOKIT_TOOLS_PROTOBUF_H
#define HOOKIT_TOOLS_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

struct pb {
    unsigned char *buf;
    size_t len, cap;
    int failed;                 /* out of memory: later writes are dropped */
};

void pb_init(struct pb *b);
void pb_free(struct pb *b);
void pb_reset(struct pb *b);                       /* empty, keeps its memory */
void pb_varint(struct pb *b, uint64_t v);          /* a bare varint */
/* Field `field` of wire type varint (int64, uint64, bool).  Zero is
 * written too (proto3 readers take it as the default either way). */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
void pb_int(struct pb *b, uint32_t field, int64_t v);
/* Field `field` of wire type length-delimited: bytes, a string, a
 * message built in another pb, or packed varints. */
void pb_bytes(struct pb *b, uint32_t field, const void *data, size_t len);
void pb_string(struct pb *b, uint32_t field, const char *s);
void pb_message(struct pb *b, uint32_t field, const struct pb *msg);
void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n);

#endif
