/*
 * nginx_like: a master forks two workers and a cache manager from
 * spawn_process (through a function pointer, as nginx does), then waits.
 * Workers: ... > spawn_process (context) > worker_cycle > process_events x5 >
 * handle_event x3.  Reference: refstack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*proc_fn)(void *);
static volatile long sink;

static void handle_event(void) { sink++; }
static void process_events(void) { for (int i = 0; i < 3; i++) handle_event(); }
static void worker_cycle(void *data) { for (int i = 0; i < 5; i++) process_events(); }
static void expire_entries(void) { sink++; }
static void cache_manager_cycle(void *data) { for (int i = 0; i < 2; i++) expire_entries(); }

static void spawn_process(proc_fn proc, void *data)
{
    if (fork() == 0) {
        proc(data);
        exit(0);
    }
}

static void start_worker_processes(int n)
{
    for (int i = 0; i < n; i++)
        spawn_process(worker_cycle, NULL);
}

static void start_cache_manager(void) { spawn_process(cache_manager_cycle, NULL); }
static void reap_children(void) { while (wait(NULL) > 0) sink++; }

static void master_process_cycle(void)
{
    start_worker_processes(2);
    start_cache_manager();
    for (int i = 0; i < 100; i++)
        handle_event();
    reap_children();
}

int main(void)
{
    master_process_cycle();
    printf("nginx_like: %ld\n", (long)sink);
    return 0;
}
