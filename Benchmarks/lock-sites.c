// Benchmarks/lock-sites: an LD_PRELOAD library that counts pthread_mutex_lock calls (every
// PosixMutex.withLock, and the Swift runtime's own locks) by calling stack, for
// Benchmarks/locks-per-poll. Not part of the package: that script compiles it with `cc`.
// At exit it writes $LOCKCOUNT_OUT.PID.exit: a line "total N", then one line per stack:
// its count, then its frames (up to DEPTH) as FILE@0xOFFSET, for addr2line.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define SLOTS 16384
#define DEPTH 10
static _Atomic uintptr_t keys[SLOTS];
static uintptr_t stacks[SLOTS][DEPTH];
static _Atomic unsigned long counts[SLOTS];
static _Atomic unsigned long total;
static __thread int inside;
static int (*real_lock)(pthread_mutex_t *);
static void record(void **frames, int n) {
  uintptr_t h = 1469598103934665603ULL;
  for (int i = 0; i < n; i++) h = (h ^ (uintptr_t)frames[i]) * 1099511628211ULL;
  if (h == 0) h = 1;
  size_t i = h % SLOTS;
  for (int probe = 0; probe < SLOTS; probe++, i = (i + 1) % SLOTS) {
    uintptr_t k = atomic_load_explicit(&keys[i], memory_order_acquire);
    if (k == h) { atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed); return; }
    if (k == 0) {
      uintptr_t expected = 0;
      for (int d = 0; d < DEPTH; d++) stacks[i][d] = d < n ? (uintptr_t)frames[d] : 0;
      if (atomic_compare_exchange_strong(&keys[i], &expected, h) || expected == h) {
        atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed); return;
      }
    }
  }
}
int pthread_mutex_lock(pthread_mutex_t *m) {
  if (!real_lock) real_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
  atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
  if (!inside) {
    inside = 1;
    void *frames[DEPTH + 1];
    int n = backtrace(frames, DEPTH + 1);
    record(frames + 1, n - 1);
    inside = 0;
  }
  return real_lock(m);
}
static void dump(void) {
  const char *path = getenv("LOCKCOUNT_OUT");
  char name[512];
  snprintf(name, sizeof name, "%s.%d.exit", path ? path : "/tmp/lockcount", getpid());
  FILE *f = fopen(name, "w");
  if (!f) return;
  fprintf(f, "total %lu\n", atomic_load(&total));
  for (int i = 0; i < SLOTS; i++) {
    if (!atomic_load(&keys[i])) continue;
    fprintf(f, "%lu", atomic_load(&counts[i]));
    for (int d = 0; d < DEPTH && stacks[i][d]; d++) {
      Dl_info info; memset(&info, 0, sizeof info);
      dladdr((void *)stacks[i][d], &info);
      fprintf(f, " %s@0x%lx", info.dli_fname ? info.dli_fname : "?",
              info.dli_fbase ? (unsigned long)(stacks[i][d] - (uintptr_t)info.dli_fbase) : 0UL);
    }
    fprintf(f, "\n");
  }
  fclose(f);
}
__attribute__((constructor)) static void init(void) { void *f[2]; inside = 1; backtrace(f, 2); inside = 0; }
__attribute__((destructor)) static void fini(void) { dump(); }
