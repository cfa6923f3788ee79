/* A TCP connection over loopback (connect and accept are keyed by the
 * server's address, so both ends share one record: 300 bytes each way),
 * an fdopen'ed descriptor (one record for the fd and its stream), and a
 * file mapped with mmap.  Prints the port, then "ok". */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[4096];

int tcp(void)
{
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    if (bind(srv, (struct sockaddr *)&a, sizeof a) || listen(srv, 1) ||
        getsockname(srv, (struct sockaddr *)&a, &len))
        return -1;
    int cli = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(cli, (struct sockaddr *)&a, sizeof a))
        return -1;
    int con = accept(srv, NULL, NULL);
    memset(buf, 'n', 300);
    if (send(cli, buf, 300, 0) != 300 || recv(con, buf, 300, MSG_WAITALL) != 300)
        return -1;
    if (write(con, buf, 300) != 300 || read(cli, buf, 300) != 300)
        return -1;
    close(cli);
    close(con);
    close(srv);
    return ntohs(a.sin_port);
}

int fd_and_stream(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mixed.dat", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (write(fd, buf, 100) != 100)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f || fwrite(buf, 1, 50, f) != 50 || fileno(f) != fd || fclose(f))
        return -1;
    fd = open(path, O_RDONLY);
    void *m = mmap(NULL, 150, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return -1;
    munmap(m, 150);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    int port = tcp();
    printf("port %d\n", port);
    printf("%s\n", port > 0 && fd_and_stream(argc > 1 ? argv[1] : ".") == 0 ? "ok" : "failed");
    return 0;
}
