/* The operating point (DOMAIN.md): completions per minute against calls in
 * flight, and the knee past which more concurrency stopped paying. Computed
 * here so every view reads the same knee. */
#ifndef BEDTOP_OPPOINT_H
#define BEDTOP_OPPOINT_H
#include <stdbool.h>

/* In-flight values are grouped into at most this many levels, whatever their
 * size: a gauge of 4e10 must never size an allocation or a loop. */
#define BT_OPPOINT_LEVELS 64
#define BT_OPPOINT_MIN_POINTS 5   /* minutes with both figures before a knee is named */
#define BT_OPPOINT_MIN_LEVELS 3   /* distinct in-flight levels before a knee is named */

struct bt_oppoint {
    int points;          /* minutes used (both figures finite and >= 0) */
    int levels;          /* distinct in-flight levels seen */
    double width;        /* in-flight width of one level (1 up to 64 in flight) */
    double xmax, ymax;   /* largest in flight and completions seen (0 none) */
    bool enough;         /* enough data to judge a knee */
    bool plateau;        /* completions stopped rising before the largest level */
    double knee;         /* least in flight whose mean completions reach 95% of the best
                          * level's (NAN when !enough) */
};

/* xs[i] calls in flight, ys[i] completions per minute, n minutes; NAN, negative and
 * infinite values are skipped. */
void bt_oppoint_compute(const double *xs, const double *ys, int n, struct bt_oppoint *out);
#endif
