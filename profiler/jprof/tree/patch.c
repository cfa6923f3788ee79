/* Patching a skipped function's hook calls out of the code (skip.h,
 * docs/filters.md): GCC and Clang call the hooks with a 5-byte
 * `call rel32` (to the hook, or to its PLT stub); once a function is
 * skipped for good, that call stops calling, and the function runs as if
 * its hook call were not there.  x86-64 only.
 *
 * Only a call that is what it should be is touched: its opcode byte 0xe8
 * before the return address's rel32, and a target that is the hook
 * (directly, or through a PLT stub whose GOT slot holds it).  Its opcode
 * byte alone is rewritten, to 0x3d: `cmp $imm32, %eax`, an instruction of
 * the same five bytes that only sets the flags, which a call leaves
 * undefined anyway (the ABI: no flag lives across a call).  A one-byte
 * store is atomic wherever it falls, so another thread running the code
 * decodes the call or the compare, never a mix, and no call is left
 * unpatched for straddling two words (a 5-byte no-op written in one 8-byte
 * store would leave half the calls: GCC's exit calls fall anywhere).
 * The page is made writable for the store (mprotect, one patch at a time)
 * and given back read and execute.  When mprotect refuses (a policy that
 * forbids writable code), patching stops for the run: one line on stderr.
 *
 * The entry's call is patched when a skipped entry comes through it, the
 * exit's when a skipped exit does (skip.c): frames of the function open in
 * other threads when its entry call went still see their exits until then.
 * Inlined copies have calls of their own, each patched when it is seen.
 * Calls made from libhookit itself (its MPI frames) serve every function
 * and are never patched. */
#include "skip.h"

#include "common/code.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int patching;       /* on, and mprotect has not refused */
static int patch_possible; /* patching was on at start: x86-64, hookit's hooks and own code found */
static int patch_lock;
static uintptr_t hook_addr[2]; /* __cyg_profile_func_enter, _exit as the program's calls reach them */
static uintptr_t page_size;
static struct jp_patch_counts counts;

#define CALL_REL32 HK_CALL_REL32
#define CMP_EAX_IMM32 HK_CMP_EAX_IMM32

/* The object that holds the hooks (libhookit): its own calls of them (the
 * MPI wrappers' frames) serve every function, and are never patched. */
static uintptr_t own_lo, own_hi;

#if defined(__x86_64__) /* only the x86-64 code reads it */
JP_NOINSTR static int find_own(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (hook_addr[0] < lo || hook_addr[0] >= hi)
        return 0;
    own_lo = lo;
    own_hi = hi;
    return 1;
}
#endif

JP_NOINSTR void jp_patch_start(void)
{
#if defined(__x86_64__)
    hook_addr[0] = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
    hook_addr[1] = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_exit");
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    patching = hook_addr[0] && hook_addr[1] && page_size && dl_iterate_phdr(find_own, NULL) == 1;
#endif
    patch_possible = patching;
}

JP_NOINSTR void jp_patch_fork_child(void)
{
    patch_lock = 0;
}

JP_NOINSTR void jp_patch_counts(struct jp_patch_counts *out)
{
    hk_spin_lock(&patch_lock);
    *out = counts;
    out->possible = patch_possible;
    hk_spin_unlock(&patch_lock);
}

/* Where a jump to target ends up, through one PLT stub. */
JP_NOINSTR static uintptr_t through_plt(uintptr_t target)
{
    uintptr_t slot = hk_plt_slot(target);
    return slot ? __atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED) : target;
}

/* The rel32 before ret (a call's, or the compare's a patched call became)
 * reaches the hook. */
JP_NOINSTR static int reaches_hook(uintptr_t ret, int exit)
{
    int32_t rel;
    memcpy(&rel, (const void *)(ret - 4), 4);
    uintptr_t target = ret + (intptr_t)rel;
    return target == hook_addr[exit] || through_plt(target) == hook_addr[exit];
}

JP_NOINSTR static int protect(uintptr_t page, int prot)
{
    return (int)syscall(SYS_mprotect, (void *)page, (size_t)page_size, prot);
}

/* Under patch_lock: one byte of code rewritten, its page writable for the
 * store.  0, or -1 when mprotect refused (patching then stops, said once). */
JP_NOINSTR static int write_code_byte(unsigned char *at, unsigned char v)
{
    uintptr_t page = (uintptr_t)at & ~(page_size - 1);
    if (protect(page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        patching = 0;
        jp_host->log("jprof: cannot patch out the hook calls of skipped functions (mprotect: %s); "
                     "their hooks return early instead",
                     strerror(errno));
        return -1;
    }
    __atomic_store_n(at, v, __ATOMIC_SEQ_CST);
    protect(page, PROT_READ | PROT_EXEC);
    return 0;
}

/* Under patch_lock: the hook call before ret patched (1, or already), not
 * a hook call (0), or patching is off (-1).  fn: see jp_patch_entry. */
JP_NOINSTR static int patch_call(uintptr_t ret, int exit, uint64_t fn)
{
    unsigned char *site = (unsigned char *)(ret - 5);
    if (!patching)
        return -1;
    if (*site == CMP_EAX_IMM32 && reaches_hook(ret, exit))
        return 1; /* another thread's, or ours from another context */
    if ((ret >= own_lo && ret < own_hi) || *site != CALL_REL32 || !reaches_hook(ret, exit))
        return 0;
    if (fn && !jp_fn_mark(fn, JP_FN_PATCHED))
        return 0; /* its frameless exits would not be known */
    if (write_code_byte(site, CMP_EAX_IMM32) != 0)
        return -1;
    if (exit)
        counts.exit_sites++;
    else
        counts.enter_sites++;
    return 1;
}

/* ---- exits by a tail jump -------------------------------------------------
 * GCC ends a void function with `jmp __cyg_profile_func_exit` when nothing
 * follows the exit call: the hook then returns to the function's caller,
 * and its return address (after the caller's call of the function) says
 * nothing of the jump.  The jump is looked for in the function's own code:
 * from its start, past its entry call, up to the next entry call (the next
 * instrumented function's, or an inlined copy's: the search stops there)
 * or TAIL_SCAN bytes, within its loaded segment.  Each `jmp rel32` that
 * reaches the exit hook becomes `ret` (0xc3), which is what the hook would
 * have done.  A byte-wise search: five bytes that are a jump to the hook
 * inside another instruction would have to hold that very displacement. */
#define TAIL_SCAN 4096
#define JMP_REL32 0xe9
#define RET 0xc3

/* The search reads only what the object's loaded segments map
 * (common/code.h). */
/* Under patch_lock: fn's tail jumps to the exit hook patched; how many. */
JP_NOINSTR static int patch_tail_jumps(uint64_t fn)
{
    struct hk_code_object q;
    if (!hk_code_object(&q, (uintptr_t)fn))
        return 0;
    uintptr_t end = q.text_hi - 5 < fn + TAIL_SCAN ? q.text_hi - 5 : fn + TAIL_SCAN;
    int entry_seen = 0, done = 0;
    for (uintptr_t p = fn; p < end; p++) {
        unsigned char op = *(const unsigned char *)p;
        if ((op == CALL_REL32 || op == CMP_EAX_IMM32) && hk_rel32_reaches(&q, p + 5, hook_addr[0])) {
            if (entry_seen++)
                break;
        } else if (op == JMP_REL32 && entry_seen && hk_rel32_reaches(&q, p + 5, hook_addr[1])) {
            if (write_code_byte((unsigned char *)p, RET) != 0)
                break;
            counts.exit_sites++;
            done++;
        }
    }
    return done;
}

/* patching is only ever on for x86-64 (jp_patch_start). */
JP_NOINSTR static int patch_hook(uintptr_t ret, int exit, uint64_t fn)
{
    if (!__atomic_load_n(&patching, __ATOMIC_RELAXED))
        return 0;
    int saved_errno = errno;
    hk_spin_lock(&patch_lock);
    int rc = patch_call(ret, exit, exit ? 0 : fn);
    int refused = rc == 0 && !exit;
    if (rc == 0 && exit && !(jp_fn_state(fn) & JP_FN_TAIL_SEARCHED)) {
        jp_fn_mark(fn, JP_FN_TAIL_SEARCHED);
        rc = patch_tail_jumps(fn) > 0;
        refused = rc == 0; /* counted once: the search is not made again */
    }
    counts.refused += refused;
    hk_spin_unlock(&patch_lock);
    errno = saved_errno;
    return rc == 1;
}

JP_NOINSTR int jp_patch_entry(uintptr_t ret, uint64_t fn)
{
    return patch_hook(ret, 0, fn);
}

JP_NOINSTR int jp_patch_exit(uintptr_t ret, uint64_t fn)
{
    return patch_hook(ret, 1, fn);
}
