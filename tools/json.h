/*
 * A small streaming JSON writer: compact output, commas placed for you,
 * strings escaped so any bytes give valid JSON (control characters as
 * \n, \t, ... or \u00XX, invalid UTF-8 as \ufffd).
 */
#ifndef HOOKIT_TOOLS_JSON_H
#define HOOKIT_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json {
    FILE *out;
    unsigned char *first;       /* per open container: nothing written yet */
    size_t depth, cap;
    int after_key;              /* a key was written, its value comes next */
    int failed;                 /* out of memory */
};

void json_init(struct json *j, FILE *out);
/* Frees the nesting stack; returns -1 if anything failed. */
int json_finish(struct json *j);

void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);          /* NULL -> null */
void json_string_n(struct json *j, const char *s, size_t n);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_null(struct json *j);
/* s as a JSON number when it is one, else as a string; 1 when a number. */
int json_number_text(struct json *j, const char *s);

/* Write s as a JSON string literal (with quotes) to out. */
void json_write_string(FILE *out, const char *s, size_t n);

#endif
