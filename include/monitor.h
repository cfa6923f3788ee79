/*
 * monitor.h: hookit's libmonitor-compatible process and thread control API.
 *
 * A client defines any of the callbacks below (each has a weak default in
 * libhookit) and is either linked into the program, preloaded before
 * libhookit.so, or given to `hookit run --client X.so`.  The support
 * functions are provided by libhookit.  Names, signatures and constants are
 * those of libmonitor, so an existing libmonitor client builds unchanged.
 * See docs/lifecycle.md for the ordering guarantees.
 */
#ifndef HOOKIT_MONITOR_H
#define HOOKIT_MONITOR_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* A client signal handler (monitor_sigaction): return 0 when the signal was
 * handled by the client, non-zero to hand it on to the application. */
typedef int monitor_sighandler_t(int sig, siginfo_t *info, void *context);

/* How the process ended, monitor_fini_process's and
 * monitor_begin_process_exit's `how`. */
enum { MONITOR_EXIT_NORMAL = 1, MONITOR_EXIT_SIGNAL = 2, MONITOR_EXIT_EXEC = 3 };

/* Returned by monitor_thread_pre_create: do not monitor the new thread
 * (no monitor_init_thread/monitor_fini_thread for it). */
#define MONITOR_IGNORE_NEW_THREAD ((void *)-1)

#ifdef __cplusplus
extern "C" {
#endif

/* What monitor_get_new_thread_info() gives inside monitor_thread_pre_create
 * and monitor_thread_post_create: where pthread_create was called from and
 * the start routine the application gave it. */
struct monitor_thread_info {
    void *mti_create_return_addr;
    void *mti_start_routine;
};

/* ---- callbacks: define the ones you need ---------------------------------- */
void monitor_init_library(void);
void monitor_fini_library(void);
void *monitor_init_process(int *argc, char **argv, void *data);
void monitor_fini_process(int how, void *data);
void monitor_start_main_init(void);     /* __libc_start_main entered, main known */
void monitor_at_main(void);
void monitor_begin_process_exit(int how);
void *monitor_pre_fork(void);
void monitor_post_fork(pid_t child, void *data);
void monitor_init_thread_support(void);
void *monitor_thread_pre_create(void);
void monitor_thread_post_create(void *data);
void *monitor_init_thread(int tid, void *data);
void monitor_fini_thread(void *data);
size_t monitor_reset_stacksize(size_t old_size);
void monitor_pre_dlopen(const char *path, int flags);
void monitor_dlopen(const char *path, int flags, void *handle);
void monitor_dlclose(void *handle);
void monitor_post_dlclose(void *handle, int ret);
void monitor_mpi_pre_init(void);
void monitor_init_mpi(int *argc, char ***argv);
void monitor_fini_mpi(void);
void monitor_mpi_post_fini(void);

/* ---- support functions ------------------------------------------------------ */
void monitor_initialize(void);          /* start monitoring now (init_process) */
void monitor_real_abort(void);
void monitor_real_exit(int status);     /* _exit, no fini (does not return) */
pid_t monitor_real_fork(void);
int monitor_real_execve(const char *path, char *const argv[], char *const envp[]);
int monitor_real_system(const char *command);
void *monitor_real_dlopen(const char *path, int flags);
int monitor_real_dlclose(void *handle);
int monitor_real_sigprocmask(int how, const sigset_t *set, sigset_t *oldset);
int monitor_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *oldset);
/* The client sees `sig` first: handler returns 0 = consumed, non-zero = the
 * application's disposition applies.  act (may be NULL) gives sa_mask and
 * sa_flags for the client's handler; flags is reserved (pass 0). */
int monitor_sigaction(int sig, monitor_sighandler_t *handler, int flags,
                      struct sigaction *act);
int monitor_broadcast_signal(int sig);
int monitor_is_threaded(void);
void *monitor_get_addr_main(void);
void *monitor_get_addr_thread_start(void);
void *monitor_get_user_data(void);
int monitor_get_thread_num(void);
void *monitor_stack_bottom(void);
int monitor_in_start_func_wide(void *addr);
int monitor_in_start_func_narrow(void *addr);
int monitor_unwind_process_bottom_frame(void *addr);
int monitor_unwind_thread_bottom_frame(void *addr);
void monitor_set_size_rank(int size, int rank);
int monitor_mpi_comm_size(void);
int monitor_mpi_comm_rank(void);
int monitor_block_shootdown(void);
void monitor_unblock_shootdown(void);
void monitor_disable_new_threads(void);
void monitor_enable_new_threads(void);
/* Inside monitor_thread_pre_create/post_create: 0 and *mti filled; else 1. */
int monitor_get_new_thread_info(struct monitor_thread_info *mti);

/* ---- special access to wrapped functions for the application ----------------- */
/* Static builds (`hookit link`): called just before main; a program that
 * defines it takes over main's call (it calls __real_main and exits itself).
 * libhookit's default does nothing and returns 0. */
int monitor_wrap_main(int argc, char **argv, char **envp);

#ifdef __cplusplus
}
#endif

#endif
