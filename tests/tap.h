/* Tiny test harness: each check prints "ok"/"not ok" with a name; the suite
 * ends with "N passed, N failed, N skipped" which tests/run sums across suites. */
#ifndef BEDTOP_TAP_H
#define BEDTOP_TAP_H
#include <stdbool.h>

void tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void tap_near(double got, double want, double tol, const char *file, int line,
              const char *what);
void tap_streq(const char *got, const char *want, const char *file, int line,
               const char *what);
/* A check that cannot run here: "ok - # SKIP why", counted as skipped, never as
 * passed; with CI=true in the environment it is a failure. */
void tap_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_done(void);          /* prints the summary; returns the exit status */
const char *tap_srcdir(void); /* project root (env BEDTOP_SRCDIR or ".") */
const char *tap_shared(void); /* ../shared beside the project root */

#define OK(cond, ...) tap_ok((cond), __FILE__, __LINE__, __VA_ARGS__)
#define SKIP(...) tap_skip(__VA_ARGS__)
#define NEAR(got, want, tol, what) tap_near((got), (want), (tol), __FILE__, __LINE__, (what))
#define STREQ(got, want, what) tap_streq((got), (want), __FILE__, __LINE__, (what))
#endif
