/* Death by SIGPIPE (default disposition) writing to a closed pipe. */
#include <stdio.h>
#include <unistd.h>
int main(void) { int fds[2]; pipe(fds); close(fds[0]); printf("writing\n"); fflush(stdout); write(fds[1], "x", 1); printf("alive?\n"); return 0; }
