/*
 * Byte-level encoding shared by the profile writer and reader: the format
 * constants and little-endian / LEB128 helpers.  See docs/profile-format.md.
 */
#ifndef HOOKIT_PROFILE_CODEC_H
#define HOOKIT_PROFILE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* "\x89HOOKIT\n": the high byte catches 7-bit transfers, the newline
 * catches newline conversion, and the letters show in a hex dump. */
#define PF_MAGIC        "\x89HOOKIT\n"
#define PF_MAGIC_LEN    8
#define PF_MAJOR        1
#define PF_MINOR 1 /* 1.1: build_id:MODULE metadata (docs/profile-format.md) */
#define PF_HEADER_SIZE  32
#define PF_SECTION_HDR  12          /* u32 type + u64 length */
#define PF_CRC_OFFSET   24          /* the crc field itself is not checksummed */

/* Header field offsets. */
#define PF_OFF_MAJOR    8
#define PF_OFF_MINOR    10
#define PF_OFF_HDRSIZE  12
#define PF_OFF_FILESIZE 16
#define PF_OFF_CRC      24
#define PF_OFF_FLAGS    28

enum pf_section_type {
    PF_SEC_STRINGS = 1,
    PF_SEC_PROCESS = 2,
    PF_SEC_FUNCS   = 3,
    PF_SEC_THREAD  = 4,
};

#define PF_VARINT_MAX   10          /* bytes in the longest uint64 LEB128 */

static inline void pf_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline void pf_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void pf_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint16_t pf_get_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pf_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t pf_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Encode v as unsigned LEB128 into p (room for PF_VARINT_MAX bytes);
 * returns the number of bytes written. */
static inline size_t pf_put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* Signed values (pid, rank) are zigzag-encoded so -1 takes one byte. */
static inline uint64_t pf_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pf_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
