/*
 * Fuzz target: the ioprof log reader of `hookit io` (tools/cmd_io.c).
 *
 * The reader takes a path, so the input goes to a memfd and the command
 * runs on /proc/self/fd/N, as `hookit io LOG` would, with stdout sent
 * to /dev/null.  An input not starting with the log's magic
 * line gets it prepended, so mutations exercise the log parser and not the
 * profile reader (fuzz_profile covers that).  Any crash, sanitizer report,
 * or exit from inside the command is a finding.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int cmd_io(int argc, char **argv);

#define MAGIC "# ioprof log"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1, null_fd = -1;
    static char path[64];
    if (fd < 0) {
        if ((fd = memfd_create("fuzz-ioplog", 0)) < 0 || (null_fd = open("/dev/null", O_WRONLY)) < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        dup2(null_fd, 1);       /* the tables: not interesting here */
    }
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    if (size < strlen(MAGIC) || memcmp(data, MAGIC, strlen(MAGIC)) != 0)
        if (write(fd, MAGIC " 1\n", strlen(MAGIC) + 3) < 0)
            abort();
    if (size && write(fd, data, size) != (ssize_t)size)
        abort();

    char *argv[] = { "io", path, NULL };
    cmd_io(2, argv);            /* errors: one line on stderr (left there, so
                                 * a sanitizer's report is never hidden) */
    fflush(stdout);
    return 0;
}
