/* Exactly known I/O, each kind in its own function, for tests/io: a file
 * written and read through descriptors (sequential, positioned, after a
 * seek, through a dup), a file written and read through stdio, a socket
 * pair with partial and non-blocking reads, and failing calls whose errno
 * must reach the program unchanged.  Prints one line per check; any
 * difference from the real behaviour is printed as "BAD ...". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char buf[20000];
static int bad;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("BAD %s (errno %d)\n", what, errno);
        bad = 1;
    }
}

/* file A: 10 x 1000 consecutive writes, a pwrite of 500 at 20000, a seek
 * back to 0 and a write of 100, an fsync. */
void fd_write(const char *path)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    check(fd >= 0, "open for writing");
    memset(buf, 'a', sizeof buf);
    for (int i = 0; i < 10; i++)
        check(write(fd, buf, 1000) == 1000, "write 1000");
    check(pwrite(fd, buf, 500, 20000) == 500, "pwrite 500 at 20000");
    check(lseek(fd, 0, SEEK_SET) == 0, "lseek to 0");
    check(write(fd, buf, 100) == 100, "write 100 at 0");
    check(fsync(fd) == 0, "fsync");
    check(close(fd) == 0, "close");
}

/* file A again: 4096-byte reads to the end (20500 bytes: 5 x 4096, 20, 0),
 * a pread of 50 at 100, then through a dup: a seek to 0 on the copy and a
 * read of 100 on the original (they share the offset). */
void fd_read(const char *path)
{
    int fd = open(path, O_RDONLY);
    check(fd >= 0, "open for reading");
    ssize_t n, total = 0;
    int reads = 0;
    while ((n = read(fd, buf, 4096)) > 0) {
        total += n;
        reads++;
    }
    check(n == 0 && total == 20500 && reads == 6, "read to the end");
    check(pread(fd, buf, 50, 100) == 50, "pread 50 at 100");
    int fd2 = dup(fd);
    check(fd2 > fd, "dup");
    check(lseek(fd2, 0, SEEK_SET) == 0, "lseek the dup");
    check(read(fd, buf, 100) == 100, "read 100 after the dup's seek");
    check(close(fd2) == 0 && close(fd) == 0, "close both");
}

/* file B through stdio: 3 lines of 100 bytes with fwrite, fputs of 6,
 * 4 x fputc, fprintf of 6: 316 bytes, all consecutive. */
void stdio_write(const char *path)
{
    FILE *f = fopen(path, "w");
    check(f != NULL, "fopen w");
    char line[100];
    memset(line, 'b', sizeof line);
    line[99] = '\n';
    for (int i = 0; i < 3; i++)
        check(fwrite(line, 1, 100, f) == 100, "fwrite 100");
    check(fputs("hello\n", f) >= 0, "fputs");
    for (int i = 0; i < 4; i++)
        check(fputc('x', f) == 'x', "fputc");
    check(fprintf(f, "%05d\n", 42) == 6, "fprintf");
    check(fclose(f) == 0, "fclose");
}

/* file B: 4 fgets, 4 fgetc, fscanf of 5 bytes, fgetc of the newline and one
 * at EOF; rewind, an fread of everything (316 of 400 asked), fseek to 10,
 * getline of the rest of the first line (90), ftell. */
void stdio_read(const char *path)
{
    FILE *f = fopen(path, "r");
    check(f != NULL, "fopen r");
    char line[200];
    for (int i = 0; i < 3; i++)
        check(fgets(line, sizeof line, f) && strlen(line) == 100, "fgets 100");
    check(fgets(line, sizeof line, f) && !strcmp(line, "hello\n"), "fgets hello");
    for (int i = 0; i < 4; i++)
        check(fgetc(f) == 'x', "fgetc x");
    int v = 0;
    check(fscanf(f, "%d", &v) == 1 && v == 42, "fscanf 42");
    check(fgetc(f) == '\n', "fgetc newline");
    check(fgetc(f) == EOF && feof(f) && !ferror(f), "fgetc at EOF");
    rewind(f);
    check(fread(buf, 1, 400, f) == 316 && feof(f), "fread 316 of 400");
    check(fseek(f, 10, SEEK_SET) == 0, "fseek 10");
    char *l = NULL;
    size_t cap = 0;
    check(getline(&l, &cap, f) == 90, "getline 90");
    free(l);
    check(ftell(f) == 100, "ftell 100");
    check(fclose(f) == 0, "fclose r");
}

/* A socket pair: 1000 bytes one way, 200 the other read as 100 + 100
 * (partial), then a non-blocking read that must fail with EAGAIN. */
void sockets(void)
{
    int sv[2];
    check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    memset(buf, 's', 1000);
    check(write(sv[0], buf, 1000) == 1000, "write 1000 to the pair");
    check(read(sv[1], buf, 4096) == 1000, "read 1000 from the pair");
    check(send(sv[1], buf, 200, 0) == 200, "send 200");
    check(recv(sv[0], buf, 100, 0) == 100, "recv 100 (partial)");
    check(recv(sv[0], buf, 4096, 0) == 100, "recv the other 100");
    check(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
    errno = 0;
    check(recv(sv[0], buf, 10, 0) == -1 && errno == EAGAIN, "recv EAGAIN");
    check(close(sv[0]) == 0 && close(sv[1]) == 0, "close the pair");
}

/* Failing calls: errno and results exactly as without hookit. */
void failures(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/no/such/file", dir);
    errno = 0;
    check(open(path, O_RDONLY) == -1 && errno == ENOENT, "open ENOENT");
    errno = 0;
    check(fopen(path, "r") == NULL && errno == ENOENT, "fopen ENOENT");
    errno = 0;
    check(read(12345, buf, 10) == -1 && errno == EBADF, "read EBADF");
    errno = 0;
    check(write(-1, buf, 10) == -1 && errno == EBADF, "write EBADF");
    struct stat st;
    errno = 0;
    check(stat(path, &st) == -1 && errno == ENOENT, "stat ENOENT");
    errno = 0;
    check(close(12345) == -1 && errno == EBADF, "close EBADF");
    /* errno survives a successful wrapped call untouched */
    errno = 1234;
    check(write(1, "", 0) == 0 && errno == 1234, "errno kept across a successful write");
}

static void on_alarm(int sig) { (void)sig; }

/* A read interrupted by a signal (no SA_RESTART): -1 and EINTR. */
void interrupted(void)
{
    int p[2];
    check(pipe(p) == 0, "pipe");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 0 }, { 0, 50000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    errno = 0;
    check(read(p[0], buf, 10) == -1 && errno == EINTR, "read EINTR");
    close(p[0]);
    close(p[1]);
}

/* A partial write into a full non-blocking pipe, then EAGAIN. */
void partial_write(void)
{
    int p[2];
    check(pipe(p) == 0, "pipe 2");
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    ssize_t total = 0, n;
    while ((n = write(p[1], buf, 3000)) == 3000)
        total += n;
    check(n >= 0 || errno == EAGAIN, "partial or EAGAIN");
    if (n > 0) {
        total += n;
        errno = 0;
        n = write(p[1], buf, 3000);
    }
    check(n == -1 && errno == EAGAIN, "write EAGAIN on a full pipe");
    printf("pipe took %zd bytes\n", total);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/a.dat", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    fd_write(a);
    fd_read(a);
    stdio_write(b);
    stdio_read(b);
    sockets();
    failures(dir);
    interrupted();
    partial_write();
    printf("%s\n", bad ? "some checks failed" : "all checks passed");
    return bad;
}
