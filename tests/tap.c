#include "tests/tap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed, skipped;

void tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("%s - ", cond ? "ok" : "not ok");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (!cond)
        printf("  (%s:%d)", file, line);
    putchar('\n');
    if (cond)
        passed++;
    else
        failed++;
}

void tap_near(double got, double want, double tol, const char *file, int line,
              const char *what)
{
    bool good = fabs(got - want) <= tol || (isnan(got) && isnan(want));
    tap_ok(good, file, line, "%s: got %.6g want %.6g", what, got, want);
}

void tap_streq(const char *got, const char *want, const char *file, int line,
               const char *what)
{
    bool good = got && want && strcmp(got, want) == 0;
    tap_ok(good, file, line, "%s", what);
    if (!good)
        printf("#   got:  %s\n#   want: %s\n", got ? got : "(null)", want ? want : "(null)");
}

void tap_skip(const char *fmt, ...)
{
    const char *ci = getenv("CI");
    bool fail = ci && !strcmp(ci, "true");
    va_list ap;
    printf(fail ? "not ok - " : "ok - # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    puts(fail ? " (a skip, and CI must not skip)" : "");
    if (fail)
        failed++;
    else
        skipped++;
}

int tap_done(void)
{
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

const char *tap_srcdir(void)
{
    const char *d = getenv("BEDTOP_SRCDIR");
    return d && *d ? d : ".";
}

const char *tap_shared(void)
{
    static char buf[4096];
    const char *d = getenv("BEDTOP_SHARED");
    if (d && *d)
        return d;
    snprintf(buf, sizeof buf, "%s/../shared", tap_srcdir());
    return buf;
}
