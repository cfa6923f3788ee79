/*
 * hookit application API.  Link with -lhookit (or `pkg-config --libs hookit`).
 *
 * Collection starts on unless HOOKIT_PROFILING=0.  These calls let a program
 * profile only the part it cares about:
 *
 *     hookit_stop();            // skip set-up
 *     setup();
 *     hookit_start();
 *     solve();
 *     hookit_flush();           // write a profile now, keep collecting
 */
#ifndef HOOKIT_HOOKIT_H
#define HOOKIT_HOOKIT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Turn delivery of function entry/exit events on. */
void hookit_start(void);
/* Turn it off; frames already open are closed as they return. */
void hookit_stop(void);
/* Ask the profiler to write its profile now and keep collecting. */
void hookit_flush(void);
/* 1 while collection is on. */
int hookit_collecting(void);

#ifdef __cplusplus
}
#endif
#endif
