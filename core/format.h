/* One formatter per kind of figure, used by every view that prints numbers
 * (check text, replay --at, export, error messages), so that one figure reads
 * the same everywhere. Unknown (NaN) prints as "-" in the compact forms and as
 * an empty field in the plain (CSV) form; none of them ever prints an exponent
 * ("1e+07") or "inf"/"nan".
 *
 *   tokens   tokens or tokens per minute, compact: 12, 1.2k, 350k, 1.23M, 4.5G
 *   count    calls, throttles, fits: the same scale as tokens (12, 350k, 1.23M)
 *   pct      a percentage with one decimal and no sign: 38.4 (the caller adds %)
 *   pct_q    the same with how sure it is, as every view prints a headroom %:
 *            "<41.0" at most (upper bound), ">41.0" at least (lower bound),
 *            "~41.0" an estimate, "41.0" known or idle, "-" unknown
 *   latency  milliseconds in, a unit out: 850ms, 5.3s, 42s, 2.5m
 *   age      seconds in: 45s, 12m, 3h05m, 2d04h
 *   grouped  an exact number with thousands separators: 10,000,000, 0.01
 *   plain    a machine-readable number: whole numbers as digits, others with
 *            up to 6 decimals, no exponent (CSV, ranges in messages)
 *
 * Every function writes at most n bytes including the NUL and returns out. */
#ifndef BEDTOP_FORMAT_H
#define BEDTOP_FORMAT_H
#include <stddef.h>

#include "core/headroom.h"

char *bt_fmt_tokens(double v, char *out, size_t n);
char *bt_fmt_count(double v, char *out, size_t n);
char *bt_fmt_pct(double v, char *out, size_t n);
char *bt_fmt_pct_q(double v, enum bt_quality q, char *out, size_t n);
char *bt_fmt_latency(double ms, char *out, size_t n);
char *bt_fmt_age(double seconds, char *out, size_t n);
char *bt_fmt_grouped(double v, char *out, size_t n);
/* decimals: digits after the point kept (rounded); trailing zeros dropped. */
/* v rounded to `decimals` places, halves away from zero, as every writer rounds a
 * figure (JSON, text, CSV: one rounding, so 99.25 is 99.3 everywhere, never the
 * 99.2 printf's binary halves give); never -0. */
double bt_round_to(double v, int decimals);
char *bt_fmt_plain(double v, int decimals, char *out, size_t n);

/* Buffer sizes that hold any output of the functions above. */
#define BT_FMT_SHORT 16   /* tokens, count, pct, pct_q, latency, age */
#define BT_FMT_LONG 48    /* grouped, plain */
#endif
