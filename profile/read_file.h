/*
 * A whole file in memory, for the readers of profile/ (the .prof format,
 * the trace, the ioprof log): read to the end rather than trusting st_size
 * (pipes and /proc too), EINTR retried (read_file.c).  And the readers'
 * one door for the `hookit` commands: a profile or a trace, by what the
 * file holds (read_any.c).
 */
#ifndef HOOKIT_PROFILE_READ_FILE_H
#define HOOKIT_PROFILE_READ_FILE_H

#include <stddef.h>

/* fd's bytes from where it is to its end, NUL-terminated (buf[*len] == 0),
 * to free().  NULL with errno (ENOMEM, or read's) on failure; *len is then
 * how far it got.  fd stays open. */
unsigned char *profile_read_fd(int fd, size_t *len);

/* profile_read_file, or trace_read_file + trace_to_profile when path is a
 * trace: what the `hookit` commands use to open any input.  NULL with a
 * message in err. */
struct profile;
struct profile *profile_or_trace_read_file(const char *path, char *err, size_t errlen);

#endif
