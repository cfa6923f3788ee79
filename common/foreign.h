/* Symbols another runtime defines but declares in no header we can include:
 * their one declaration, so that no .c file writes a foreign prototype by
 * hand (-Wmissing-prototypes catches our own functions, not these) and a
 * changed signature is fixed in one place.
 *
 *  - __libc_stack_end: glibc's dynamic loader (ld.so) exports the address
 *    of the initial stack (argc, argv, envp above it); glibc declares it
 *    only in its private headers.
 *  - __tsan_init: ThreadSanitizer's runtime (libtsan) sets itself up; it
 *    ships no header for it.  Only a TSan build (make SANITIZE=thread)
 *    refers to it. */
#ifndef HOOKIT_COMMON_FOREIGN_H
#define HOOKIT_COMMON_FOREIGN_H

extern void *__libc_stack_end;

#ifdef __SANITIZE_THREAD__
void __tsan_init(void);
#endif

#endif
