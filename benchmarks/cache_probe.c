/* benchmarks/cache_probe.c: this host's latency per dependent load over working sets of given
 * sizes (for benchmarks/cache_curve.py --host).
 *
 *   cache_probe 1 4 8 16      prints one number per size (MiB): ns per load, on one line
 *
 * Built by cache_curve.py with -DMAX_MIB set to its MAX_SIZE_MIB, the one home of the largest size.
 *
 * Each size is a random cycle through its 64-byte lines (one pointer a line, on transparent huge
 * pages where the kernel allows, so that the TLB does not add to the figure), walked once to
 * load it and then timed over 3 million steps: every load depends on the one before, so the time
 * per step is the latency of wherever that working set lives (L1, L2, the shared L3, memory). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MAX_MIB
#error "build with -DMAX_MIB=<largest size>: benchmarks/cache_curve.py passes its MAX_SIZE_MIB"
#endif

#define LINE 64
#define STEPS 3000000UL
#define HUGE (2UL << 20)

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* xorshift64*: a fixed sequence, so every run walks the same cycle */
static uint64_t state = 0x9E3779B97F4A7C15ULL;
static uint64_t next_random(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

static double latency(size_t mib) {
    size_t bytes = mib << 20, lines = bytes / LINE;
    char *buf = aligned_alloc(HUGE, (bytes + HUGE - 1) / HUGE * HUGE);
    size_t *order = malloc(lines * sizeof *order);
    if (!buf || !order) {
        fprintf(stderr, "cache_probe: out of memory for %zu MiB\n", mib);
        exit(2);
    }
    madvise(buf, bytes, MADV_HUGEPAGE);
    for (size_t i = 0; i < lines; i++) order[i] = i;
    for (size_t i = lines - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = next_random() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) *(void **)(buf + order[i] * LINE) = buf + order[(i + 1) % lines] * LINE;
    void *p = buf + order[0] * LINE;
    for (size_t i = 0; i < lines; i++) p = *(void **)p;
    double t0 = seconds();
    for (unsigned long i = 0; i < STEPS; i++) p = *(void **)p;
    double ns = (seconds() - t0) / STEPS * 1e9;
    if (p == NULL) ns = -1; /* keeps the walk from being optimised away; never true */
    free(order);
    free(buf);
    return ns;
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        char *end;
        long mib = strtol(argv[a], &end, 10);
        if (*end || mib < 1 || mib > MAX_MIB) {
            fprintf(stderr, "cache_probe: a size is a whole number of MiB in [1, %d]; got '%s'\n", MAX_MIB, argv[a]);
            return 2;
        }
        printf("%s%.1f", a > 1 ? " " : "", latency((size_t)mib));
    }
    printf("\n");
    return 0;
}
