/* The readers' one way of taking a whole file into memory (read_file.h). */
#include "profile/read_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned char *profile_read_fd(int fd, size_t *len)
{
    /* A regular file's size is the first guess, with room for the NUL. */
    struct stat st;
    size_t cap =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 64 * 1024;
    unsigned char *buf = malloc(cap);
    *len = 0;
    while (buf) {
        if (*len == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
            continue;
        }
        ssize_t n = read(fd, buf + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (n == 0) {
            buf[*len] = 0; /* *len < cap: the loop grows first when full */
            return buf;
        }
        *len += (size_t)n;
    }
    free(buf);
    errno = ENOMEM;
    return NULL;
}
