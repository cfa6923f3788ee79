/*
 * A whole file in memory, for the readers of profile/ (the .prof format,
 * the trace, the ioprof log): read to the end rather than trusting st_size
 * (pipes and /proc too), EINTR retried.
 */
#ifndef HOOKIT_PROFILE_READ_FILE_H
#define HOOKIT_PROFILE_READ_FILE_H

#include <stddef.h>

/* fd's bytes from where it is to its end, NUL-terminated (buf[*len] == 0),
 * to free().  NULL with errno (ENOMEM, or read's) on failure; *len is then
 * how far it got.  fd stays open. */
unsigned char *profile_read_fd(int fd, size_t *len);

#endif
