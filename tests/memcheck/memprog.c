/* The memory gate's test program (tests/test_memcheck.cpp): one workload,
 * and variants that each change one memory counter. Built with -O0 -g so
 * that valgrind's stacks name these functions and lines.
 *   memprog base        200 allocations of 64 bytes, freed one at a time
 *   memprog grow_cache  base + 1,000 more 64-byte allocations (grow_cache)
 *   memprog leaky_parse base + 10 leaked 100-byte blocks (leaky_parse)
 *   memprog use_uninit  base + a branch on an uninitialised heap value
 *   memprog hold_all    base's allocations, all live at once (hold_all)
 *   memprog sse_overread base + a 16-byte SSE2 load past the end of an
 *                       8-byte block (copy16): memcheck's innermost frame is
 *                       the intrinsic _mm_loadu_si128 in GCC's emmintrin.h,
 *                       inlined into copy16, which is the culprit (x86-64) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { base_allocs = 200, block_bytes = 64 };

static volatile long sink;

static void churn(void)
{
    for (int i = 0; i < base_allocs; ++i) {
        char* p = malloc(block_bytes);
        memset(p, i, block_bytes);
        sink += p[0];
        free(p);
    }
}

static void grow_cache(void)
{
    for (int i = 0; i < 1000; ++i) {
        char* p = malloc(block_bytes);
        memset(p, i, block_bytes);
        sink += p[1];
        free(p);
    }
}

static void leaky_parse(void)
{
    for (int i = 0; i < 10; ++i) {
        char* p = malloc(100);
        memset(p, 'x', 100);
        sink += p[2];
        p = NULL; /* lost */
    }
}

static void use_uninit(void)
{
    int* p = malloc(sizeof(int));
    if (*p == 42) sink += 1; /* conditional jump on an uninitialised value */
    free(p);
}

static void hold_all(void)
{
    char* blocks[base_allocs];
    for (int i = 0; i < base_allocs; ++i) {
        blocks[i] = malloc(block_bytes);
        memset(blocks[i], i, block_bytes);
    }
    for (int i = 0; i < base_allocs; ++i) {
        sink += blocks[i][0];
        free(blocks[i]);
    }
}

#if defined(__SSE2__)
/* Copies 16 bytes with one unaligned SSE2 load, as snappy's IncrementalCopy
 * does: reading from `src + 8` of an 8-byte block reads past its end. */
static void copy16(char* dst, const char* src)
{
    _mm_storeu_si128((__m128i*)dst, _mm_loadu_si128((const __m128i*)src));
}

static void sse_overread(void)
{
    char* small = malloc(8);
    char out[16];
    memset(small, 1, 8);
    copy16(out, small + 8);
    sink += out[0] == 0;
    free(small);
}
#endif

int main(int argc, char** argv)
{
    const char* v = argc > 1 ? argv[1] : "base";
    if (strcmp(v, "hold_all") == 0) {
        hold_all();
    } else {
        churn();
    }
    if (strcmp(v, "grow_cache") == 0) grow_cache();
    if (strcmp(v, "leaky_parse") == 0) leaky_parse();
    if (strcmp(v, "use_uninit") == 0) use_uninit();
#if defined(__SSE2__)
    if (strcmp(v, "sse_overread") == 0) sse_overread();
#else
    if (strcmp(v, "sse_overread") == 0) {
        fprintf(stderr, "memprog: sse_overread needs SSE2 (x86-64)\n");
        return 2;
    }
#endif
    if (strcmp(v, "crash") == 0) {
        volatile int* np = NULL;
        return *np;
    }
    return 0;
}
