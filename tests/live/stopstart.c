/* `hookit ctl stop` and `start` at different depths of the program
 * (tests/live/test_stop_start.py): frames open at the stop return while
 * collection is off, so their exits are never seen.
 *
 * main > deep > inner prints "inner" and blocks reading a line from its
 * stdin (the test stops collection then, and writes the line); inner and
 * deep return unseen; main > other (entered unseen) prints "other" and
 * blocks reading another line (the test starts collection then, and
 * writes it); other's exit pairs with no frame, leaf's first entry shows
 * inner and deep gone (3 exits in all, the stop's doing); main calls
 * leaf() LEAVES times and ends.  Each line is flushed: the test
 * waits for it before acting. */
#include <stdio.h>
#include <unistd.h>

#define LEAVES 3

static char line[64];

__attribute__((noinline, no_instrument_function)) static void wait_line(const char *say)
{
    printf("%s\n", say);
    fflush(stdout);
    if (read(0, line, sizeof line) <= 0)
        line[0] = 0;
}

void inner(void);
void inner(void)
{
    wait_line("inner");
}

void deep(void);
void deep(void)
{
    inner();
}

void other(void);
void other(void)
{
    wait_line("other");
}

static volatile int sink;
void leaf(int i);
void leaf(int i)
{
    sink += i;
}

int main(void)
{
    deep();
    other();
    for (int i = 0; i < LEAVES; i++)
        leaf(i);
    return 0;
}
