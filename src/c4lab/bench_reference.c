/*
 * Reference random playouts in C, for `c4lab bench --c`: the yardstick the
 * numba kernels are compared with on the machine at hand.
 *
 * Same playouts as the kernels: from the empty board, a uniformly random
 * non-full column each move (xorshift64*, multiply-shift to the range), a
 * win test after every move, a draw when the board is full.  Two engines:
 *
 *   lines     per-line bit masks, as the numba kernels (any board, forbidden
 *             cells skipped by a gravity table)
 *   bitboard  the classic one-word bitboard (column-major, a guard bit per
 *             column): the fastest C for boards with W*(H+1) <= 64, such as
 *             7x6; no forbidden cells
 *
 * usage: bench_reference ENGINE W H FCOL FROW N     (FCOL = -1: none)
 * prints: playouts_per_s mean_length wins_a wins_b draws
 * Rates use the process's CPU time (clock()).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 88172645463325252ULL;

static inline uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static inline unsigned below(uint64_t x, unsigned n) {
    return (unsigned)(((x >> 32) * (uint64_t)n) >> 32);
}

static long wins[4];
static long moves;

static void run_lines(int W, int H, int fc, int fr, long n) {
    uint8_t next_row[16 * 16];
    for (int c = 0; c < 16; c++) {
        int nx = H;
        for (int r = 15; r >= 0; r--) {
            if (r < H && c < W) {
                if (!(c == fc && r == fr)) nx = r;
                next_row[c * 16 + r] = (uint8_t)nx;
            } else {
                next_row[c * 16 + r] = (uint8_t)H;
            }
        }
    }
    int playable = W * H - (fc >= 0 ? 1 : 0);
    for (long i = 0; i < n; i++) {
        uint16_t lines[2][72];
        memset(lines, 0, sizeof lines);
        uint8_t height[12], avail[12];
        unsigned na = 0;
        for (int c = 0; c < W; c++) {
            height[c] = next_row[c * 16];
            if (height[c] < H) avail[na++] = (uint8_t)c;
        }
        int empty = playable, side = 0, result;
        for (;;) {
            unsigned k = below(next_rand(), na);
            unsigned c = avail[k], r = height[c];
            unsigned h = next_row[c * 16 + r + 1];
            height[c] = (uint8_t)h;
            if (h >= (unsigned)H) avail[k] = avail[--na];
            empty--;
            moves++;
            uint16_t *L = lines[side];
            uint64_t m0 = L[r] |= (uint16_t)(1u << c);
            uint64_t m1 = L[12 + c] |= (uint16_t)(1u << r);
            uint64_t m2 = L[35 + c - r] |= (uint16_t)(1u << c);
            uint64_t m3 = L[47 + c + r] |= (uint16_t)(1u << c);
            uint64_t w = m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
            if (w & (w >> 1) & (w >> 2) & (w >> 3)) { result = 1 + side; break; }
            if (empty == 0) { result = 3; break; }
            side ^= 1;
        }
        wins[result]++;
    }
}

static void run_bitboard(int W, int H, long n) {
    const int S = H + 1; /* column stride: H cells and an always-empty guard bit */
    for (long i = 0; i < n; i++) {
        uint64_t bb[2] = {0, 0};
        unsigned height[12], avail[12], na = (unsigned)W;
        for (int c = 0; c < W; c++) { height[c] = (unsigned)(c * S); avail[c] = (unsigned)c; }
        int empty = W * H, side = 0, result;
        for (;;) {
            unsigned k = below(next_rand(), na);
            unsigned c = avail[k];
            uint64_t m = bb[side] |= 1ULL << height[c];
            if (++height[c] == c * S + H) avail[k] = avail[--na];
            empty--;
            moves++;
            uint64_t y;
            int won;
            y = m & (m >> S);       won  = (y & (y >> (2 * S))) != 0;
            y = m & (m >> 1);       won |= (y & (y >> 2)) != 0;
            y = m & (m >> (S - 1)); won |= (y & (y >> (2 * (S - 1)))) != 0;
            y = m & (m >> (S + 1)); won |= (y & (y >> (2 * (S + 1)))) != 0;
            if (won) { result = 1 + side; break; }
            if (empty == 0) { result = 3; break; }
            side ^= 1;
        }
        wins[result]++;
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s lines|bitboard W H FCOL FROW N\n", argv[0]);
        return 2;
    }
    const char *engine = argv[1];
    int W = atoi(argv[2]), H = atoi(argv[3]), fc = atoi(argv[4]), fr = atoi(argv[5]);
    long n = atol(argv[6]);
    if (W < 4 || W > 12 || H < 4 || H > 12 || n < 1) {
        fprintf(stderr, "bad board or count\n");
        return 2;
    }
    clock_t t0 = clock();
    if (strcmp(engine, "lines") == 0) {
        run_lines(W, H, fc, fr, n);
    } else if (strcmp(engine, "bitboard") == 0) {
        if (fc >= 0 || W * (H + 1) > 64) {
            fprintf(stderr, "the bitboard engine takes plain boards with W*(H+1) <= 64\n");
            return 2;
        }
        run_bitboard(W, H, n);
    } else {
        fprintf(stderr, "unknown engine %s\n", engine);
        return 2;
    }
    double seconds = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("%.1f %.3f %ld %ld %ld\n", n / seconds, (double)moves / n, wins[1], wins[2], wins[3]);
    return 0;
}
