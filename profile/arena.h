/*
 * The live arena: the layout of the process-shared mapping in which libjprof
 * keeps every thread's calling-context tree while the program runs.  The
 * profiler writes it; live readers (`hookit top`, `snapshot`, `recover`)
 * map the same pages and read it.  Everything is addressed by 32-bit slot
 * references (offset / ARENA_SLOT) from the start of the mapping, so the
 * mapping may sit at any address in the reader.
 *
 * Slot 0 holds struct arena_header; reference 0 means "none"; slot 1
 * holds struct arena_process; slot 2 (version 2 on) struct
 * arena_control_log (and from its byte 32 struct arena_waits), slot 3
 * struct arena_more (the MPI job, named frames; allocations are slot
 * pairs).
 *
 * Writers and readers (see docs/live.md):
 *  - Only a thread writes its own nodes and thread record.
 *  - New nodes are fully written before a release store links them (as a
 *    parent's first_child or a sibling's next_sibling), so a reader that
 *    follows links with acquire loads never sees a half-made node.  Nodes
 *    are never unlinked or moved while the process lives.
 *  - arena_thread.seq is odd while the thread updates its tree (every
 *    entry and exit); a reader copies a thread's nodes, then retries if seq
 *    was odd or changed.  That snapshot is consistent: every parent's
 *    inclusive ticks include its closed children's.
 *  - Open frames are not in the nodes (their time is still running): the
 *    thread's shadow stack is in the arena too (arena_thread.stack, an
 *    array of struct arena_frame; frame 0 is the root), with
 *    arena_thread.depth open frames above the root, under the same seq.
 *  - A pending reset or zerobase (ARENA_REQ_RESET / ARENA_REQ_ZERO in
 *    arena_thread.request, the command's moment in pending_at) is a
 *    thread's tree as it will be, not yet as it is: the tree is
 *    single-writer, so another thread (the control thread, a thread that
 *    claimed the command) never rewrites it; it stores pending_at, then
 *    sets the bit with a release RMW.  The owner clears the bits with an
 *    acquire RMW inside its busy section (seq odd), before it changes its
 *    tree in any other way (the start of every hook, a flow event, an I/O
 *    or wait event, its end), and applies them as of pending_at, so what
 *    it makes is what a reader was shown meanwhile.  A reader that loads
 *    the bits (acquire) and pending_at between its two even, equal seq
 *    loads applies them to its copy (arena_copy_pending in
 *    profile/arena_walk.h): the owner cannot have applied them in that
 *    window, since clearing a bit takes a busy section.  A bit set
 *    during the copy may be seen or not: the command took effect for
 *    that thread at the setter's RMW, before or after the copy.
 */
#ifndef HOOKIT_ARENA_H
#define HOOKIT_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define ARENA_MAGIC "HKARENA1"
/* The magic of an arena whose process ended normally, its profile written,
 * but could not remove its registry files (it changed user in a way
 * libhookit did not see): readers take it for no process, `hookit
 * recover` and the next registration remove it without a profile. */
#define ARENA_MAGIC_ENDED "HKENDED1"
/* 2: slot 2 holds struct arena_control_log.  Readers take 1 too (no log). */
#define ARENA_VERSION 2
#define ARENA_VERSION_MIN 1
#define ARENA_SLOT 64u

typedef uint32_t arena_ref;

/* Commands an outside process posts in arena_header.control (`hookit ctl`). */
enum arena_command {
    ARENA_CMD_NONE = 0,
    ARENA_CMD_START = 1,
    ARENA_CMD_STOP = 2,
    ARENA_CMD_FLUSH = 3,
    ARENA_CMD_RESET = 4,
    ARENA_CMD_ZEROBASE = 5,
};

struct arena_header {
    char magic[8];                  /* ARENA_MAGIC */
    uint32_t version;               /* ARENA_VERSION */
    uint32_t slot_size;             /* ARENA_SLOT */
    volatile uint64_t used;         /* bytes handed out (bump pointer) */
    volatile arena_ref first_thread;/* list of arena_thread, newest first */
    int32_t pid;
    double ticks_per_ns;            /* rate, refreshed when a profile is written */
    uint32_t clock;                 /* 0: ticks are TSC, 1: CLOCK_MONOTONIC ns */
    /* Control from outside: a reader stores a command, then increments
     * control_seq; the first hook to notice carries it out, stores the
     * result in control_done = control_seq.  Checked on every hook exit
     * while collecting (one load of a line nobody writes), and by libhookit
     * on every hook while collection is off.  The reader then wakes the
     * process's control thread (FUTEX_WAKE on attention, a shared futex),
     * which takes a command no hook took within 10 ms. */
    volatile uint32_t control;      /* enum arena_command */
    volatile uint32_t control_seq;
    volatile uint32_t control_done;
    volatile uint32_t control_result; /* 0 ok, else an errno value */
    volatile uint32_t attention;    /* non-zero while a command waits */
};

struct arena_node {
    uint64_t fn;                    /* function address in the profiled process */
    arena_ref parent;
    arena_ref first_child;
    arena_ref next_sibling;
    /* Extension block or 0: struct node_ext (below), ARENA_EXT_SLOTS
     * slots: counters summed when trees are merged (I/O, memory, wait
     * time), and a wait in progress. */
    arena_ref ext;
    uint64_t calls;
    uint64_t incl;                  /* inclusive ticks of closed activations */
    arena_ref last_child;           /* writer's lookup cache; readers ignore it */
    arena_ref child_index;          /* writer's hash index of many children; readers ignore it */
    uint64_t samples;               /* timer=sample: CPU-time samples taken here */
    uint64_t reserved;              /* MPI frames: bytes moved (profiler/jprof/frames/mpi.c);
                                     * other frames: ARENA_NODE_INLINED */
};

/* In arena_node.reserved of a machine frame's node: a call made there was
 * an inlined copy (GCC and Clang instrument them; the copy's hook has its
 * host's call site, the one of the frame below), as seen on the calls
 * that left the writer's fast path (a context's first).  Set only. */
#define ARENA_NODE_INLINED (1ull << 63)

/* An extension block's size (arena_node.ext).  Was 1 before wait time
 * (issue 19). */
#define ARENA_EXT_SLOTS 2u

/* A node's extension block (arena_node.ext): made by the node's own
 * thread the first time the node does I/O, allocates or waits, and
 * written by that thread only (libjprof's metrics*.c and wait.c); live
 * readers (`hookit snapshot`, `top`, `recover`) read the wait fields,
 * each an aligned 64-bit word loaded whole.  The fields before
 * wait_since are additive counters (retire.c sums them when trees are
 * merged, zerobase zeroes them: NODE_EXT_COUNTERS words). */
struct node_ext {
    uint64_t io_calls, io_bytes_read, io_bytes_written, io_ticks; /* ticks: arena_waits.clock */
    uint64_t allocs, alloc_bytes, frees, free_bytes;
    /* second slot: blocking calls that are not I/O (wait.c) */
    uint64_t wait_calls, wait_ticks; /* ticks: arena_waits.clock */
    uint64_t unmatched_exits;        /* where the tree may be wrong (unexact.c) */
    /* throttling (libjprof's tree/skip.c): the context's count stopped (a
     * flag, summed as the others), and the clock at its last checkpoint
     * (summed too when trees merge: those trees no longer run) */
    uint64_t throttled, throttle_t0;
    /* landing pads whose owner was not decided, counted on the context of
     * the frame they kept open, once it closed otherwise than at its exit
     * (common/inlined_pad.h; unexact.c).  Was spare (always 0). */
    uint64_t undecided_pads;
    uint64_t spare;
    /* The start of the blocking call this node is in now (libjprof's
     * clock, arena_header.clock), 0 when none: stored when the call
     * begins, cleared when it ends, moved to a reset's or zerobase's
     * moment when one is applied during it.  Not a counter. */
    volatile uint64_t wait_since;
};
#define NODE_EXT_COUNTERS (offsetof(struct node_ext, wait_since) / sizeof(uint64_t))

struct arena_frame {
    uint64_t t0;                    /* clock reading at entry */
    uintptr_t sp;                   /* the caller's frame address (longjmp detection) */
    uintptr_t site;                 /* the call site: inlined callees share their host's */
    arena_ref node;
    uint32_t pad;
};

enum { ARENA_THREAD_RUNNING = 1, ARENA_THREAD_ENDED = 2 };

struct arena_thread {
    arena_ref next;                 /* next thread record */
    arena_ref root;                 /* synthetic root: its children are the roots */
    int32_t tid;
    uint32_t index;                 /* 0 = main thread */
    volatile uint32_t state;        /* ARENA_THREAD_* */
    volatile uint32_t seq;          /* odd while the tree changes */
    char name[16];
    uint64_t dropped;               /* events dropped by the re-entrancy guard */
    uint64_t unmatched;             /* exits that matched no open frame */
    uint64_t priv;                  /* in-process only */
    volatile uint32_t depth;        /* open frames above stack[0] */
    volatile uint32_t request;      /* a reader's request to this thread (ARENA_REQ_*) */
    volatile arena_ref stack;       /* the shadow stack: capacity arena_frames */
    volatile uint32_t capacity;
    /* The thread's copy of its own tree, made on ARENA_REQ_COPY (see
     * struct arena_copy_node): copy_seq is odd while the thread rewrites
     * the block; a reader waits for it to move past the value it saw when
     * it asked, copies, and checks it did not move again. */
    volatile uint32_t copy_seq;
    volatile arena_ref copy_ref;    /* block: copy_nodes nodes, then copy_depth frames */
    volatile uint32_t copy_slots;   /* the block's size in slots */
    volatile uint32_t copy_nodes;
    volatile uint32_t copy_depth;
    volatile uint32_t parked;       /* 1 while waiting in a process-consistent pause */
    volatile uint64_t copy_taken;   /* clock reading when the copy was made */
    arena_ref chunks;               /* writer's: the thread's node chunks, for reuse */
    uint32_t merged_threads;        /* the "merged" record: how many ended threads it holds */
    /* The clock reading at which the reset or zerobase pending in request
     * took effect (see the file comment); written by whoever sets the bit,
     * before it.  Was `reserved` (always 0). */
    volatile uint64_t pending_at;
};

#define ARENA_THREAD_SLOTS 2

/* The first slot of each chunk of node slots a thread allocates from
 * (arena_thread.chunks lists them, newest first). */
struct arena_chunk {
    arena_ref next;                 /* the thread's previous chunk */
    uint32_t slots;                 /* this chunk's size, this slot included */
};

/* Bits of arena_thread.request, set by readers, cleared by the thread. */
#define ARENA_REQ_CONTROL 0x1u      /* a command waits in the header */
#define ARENA_REQ_COPY    0x2u      /* copy your own tree (you were always mid-update) */
#define ARENA_REQ_PAUSE   0x4u      /* process-consistent snapshot: wait at your next hook */
#define ARENA_REQ_RESET   0x8u      /* `ctl reset`: start your tree anew */
#define ARENA_REQ_ZERO    0x10u     /* `ctl zerobase`: zero your numbers, keep the tree */
/* Either is pending until the thread applies it, as of pending_at (see the
 * file comment). */
#define ARENA_REQ_PENDING (ARENA_REQ_RESET | ARENA_REQ_ZERO)
/* Set and cleared by the thread itself, never by a reader: it is in a
 * blocking call, and its hook exits meanwhile are callbacks whose time is
 * not the wait's (profiler/jprof/metrics/wait.c).  Readers leave it alone. */
#define ARENA_REQ_WAIT    0x20u
/* Set by the thread that carries out `ctl start` after a stop, in every
 * running thread; cleared by the thread at the start of its next hook,
 * which closes the frames that returned while collection was off
 * (libjprof's unexact.c).  Readers leave it alone. */
#define ARENA_REQ_RESYNC 0x40u

/*
 * Process metadata: slot 1 (reference ARENA_PROCESS_REF), right after the
 * header, written once at start (and in a forked child).  It lets a reader
 * convert ticks to time without the process's help, check a pid was not
 * reused, and lets `hookit recover` name a killed process.
 */
#define ARENA_PROCESS_REF 1u

struct arena_process {
    uint64_t start_tsc;             /* TSC and CLOCK_MONOTONIC read together at */
    uint64_t start_mono_ns;         /* start: a reader's rate is (tsc - start_tsc) / (mono - start_mono) */
    uint64_t start_wall_ns;         /* CLOCK_REALTIME at start */
    uint64_t proc_starttime;        /* field 22 of /proc/PID/stat: tells a reused pid */
    arena_ref exe;                  /* block: the executable's path, NUL-terminated */
    arena_ref argv;                 /* block: the arguments, NUL-separated */
    uint32_t argv_len;              /* bytes in argv */
    uint32_t uid;
    /* Process-consistent snapshot (ARENA_REQ_PAUSE): a reader makes
     * pause_gen odd (owner in pause_owner), threads park on it with a
     * futex wait, bounded; making it even again releases them. */
    volatile uint32_t pause_gen;
    volatile int32_t pause_owner;
    volatile uint32_t parked;       /* threads waiting now */
    uint32_t sample_us;             /* timer=sample: the sampling period (time = samples), else 0 */
};

/*
 * The last reset or zerobase (`hookit ctl`, or the program's own
 * HOOKIT_EV_RESET/ZEROBASE): slot 2 (ARENA_CONTROL_LOG_REF), version 2 on.
 * It lets a profile say why every count is zero ("reset 3.2 s after the
 * start, no call completed since") rather than "no instrumented function
 * ran".  Written by whoever carries the command out: seq goes odd (a CAS
 * from even: a writer that finds it odd, another command at the same
 * instant or the one its signal handler interrupted, leaves it to that
 * one), the fields, seq even.  A reader copies it between two equal even
 * seq loads.  A fork child keeps its parent's: its tree is the one after
 * those commands.
 */
#define ARENA_CONTROL_LOG_REF 2u

struct arena_control_log {
    volatile uint32_t seq;
    uint32_t command; /* ARENA_CMD_RESET or ARENA_CMD_ZEROBASE; 0: none yet */
    uint64_t count;   /* reset and zerobase commands carried out */
    uint64_t mono_ns; /* CLOCK_MONOTONIC at the last one (arena_process.start_mono_ns's clock) */
};

/*
 * How to read the wait fields of the extension blocks: the second half of
 * slot 2 (byte ARENA_WAITS_OFFSET of the arena, version 2 on), written
 * once at start by libjprof (a fork child keeps its parent's, an exec'ed
 * image writes its own).  All zero in an arena of an older libjprof, or
 * with JPROFOPTS=nowait: readers then have no wait times.
 */
#define ARENA_WAITS_OFFSET (ARENA_CONTROL_LOG_REF * ARENA_SLOT + 32u)
enum { ARENA_WAITS_NONE = 0, ARENA_WAITS_COUNTER = 1, ARENA_WAITS_MONOTONIC = 2 };

struct arena_waits {
    /* The clock of io_ticks and wait_ticks (libhookit's I/O clock, not
     * always libjprof's): ARENA_WAITS_COUNTER, the CPU counter (a reader
     * measures its rate as for arena_process's start pair); _MONOTONIC,
     * CLOCK_MONOTONIC ns; _NONE: no wait times recorded. */
    uint32_t clock;
    /* JPROFOPTS=cpu under timer=exact: arena_node.samples are CPU-time
     * samples of this period (µs); 0 otherwise (under timer=sample,
     * arena_process.sample_us says it). */
    uint32_t cpu_us;
};

/*
 * Slot 3 (ARENA_MORE_REF; zero in an arena made before it, which reads as
 * "no job, no named frames"): what a reader needs besides the trees.
 *
 * The MPI job the process is a rank of, written at MPI_Init when the rank
 * is known (profiler/jprof/live/job_mark.c), so that a reader finds every
 * rank of a job on its host (`hookit snapshot --job ID`, docs/live.md
 * "Several processes").  job.seq is 0 until then (not a rank), odd while
 * written, even once complete; a reader takes the fields between two equal
 * even loads.  A fork child clears it: its tree is not a rank's.
 *
 * The names of frames that are not machine code (MPI calls, Java methods:
 * profiler/jprof/frames/synthetic.c), whose keys (top bit set) stand in
 * the trees where a function's address would: a list of struct
 * arena_frame_name, newest first, each complete before a release store
 * links it into frame_names.
 */
#define ARENA_MORE_REF 3u
#define ARENA_JOB_ID_MAX 40

struct arena_job {
    volatile uint32_t seq;
    int32_t rank;              /* in MPI_COMM_WORLD */
    int32_t size;              /* of MPI_COMM_WORLD, -1 unknown */
    uint32_t launcher;         /* enum arena_job_launcher: where the id came from */
    char id[ARENA_JOB_ID_MAX]; /* the job's id, NUL-terminated (see job_mark.c) */
};

enum arena_job_launcher {
    ARENA_JOB_SLURM = 1,   /* SLURM_JOB_ID[.SLURM_STEP_ID] */
    ARENA_JOB_OPENMPI = 2, /* OMPI_MCA_ess_base_jobid, else PMIX_NAMESPACE */
    ARENA_JOB_HYDRA = 3,   /* MPICH's Hydra: mpiexec's control port (see job_mark.c) */
    ARENA_JOB_OTHER = 4,   /* a rank without a launcher's id: its own pid */
};

struct arena_more {
    struct arena_job job;
    volatile arena_ref frame_names; /* struct arena_frame_name list, newest first */
    uint32_t spare;
};

/* One named frame: its key, then name_len + 1 bytes of name and
 * module_len + 1 of module, NUL-terminated, in the same block. */
struct arena_frame_name {
    uint64_t key;
    arena_ref next;
    uint16_t name_len, module_len;
    char text[];
};

/* A node of a thread's own copy (ARENA_REQ_COPY) and of a reader's copy:
 * the tree in preorder, parent given as an index into the copy. */
struct arena_copy_node {
    uint64_t fn;
    uint64_t calls;
    uint64_t incl;
    uint64_t samples;
    arena_ref ref;                  /* the node's reference in the arena */
    uint32_t parent;                /* index of the parent, UINT32_MAX for a root */
};

_Static_assert(sizeof(struct arena_header) <= ARENA_SLOT, "header is one slot");
_Static_assert(sizeof(struct arena_node) == ARENA_SLOT, "a node is one slot");
_Static_assert(sizeof(struct arena_thread) <= ARENA_THREAD_SLOTS * ARENA_SLOT, "thread record");
_Static_assert(sizeof(struct arena_process) == ARENA_SLOT, "process block is one slot");
_Static_assert(sizeof(struct arena_control_log) <= ARENA_SLOT, "control log is one slot");
_Static_assert(sizeof(struct arena_control_log) <= 32, "the control log is slot 2's first half");
_Static_assert(sizeof(struct arena_waits) <= 32, "the wait clock is slot 2's second half");
_Static_assert(sizeof(struct node_ext) == ARENA_EXT_SLOTS * ARENA_SLOT, "whole slots");
_Static_assert(sizeof(struct arena_more) == ARENA_SLOT, "slot 3 is one slot");

#endif
