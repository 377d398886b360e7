/* Issue 16 item 8, "time parsing accepts junk": bt_parse_iso, bt_parse_duration and
 * bt_parse_when, table-driven. Each accepted input's expected value is computed by
 * hand in the table (epoch seconds of 2026-11-29T10:00:00Z = 1795946400, checked with
 * `date -ud 2026-11-29T10:00:00Z +%s`). */
#include <math.h>
#include <stdio.h>

#include "core/recording.h"
#include "core/util.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */

static const struct {
    const char *in;
    bool ok;
    long long want;
} iso[] = {
    {"2026-11-29T10:00:00Z", true, T0},
    {"2026-11-29t10:00:00z", true, T0},
    {"2026-11-29 10:00:00Z", true, T0},
    {"2026-11-29T10:00Z", true, T0},
    {"2026-11-29T10:00:00.123Z", true, T0},
    {"2026-11-29T10:00:00", true, T0},               /* no zone: UTC */
    {"2026-11-29", true, T0 - 10 * 3600},
    {"2026-11-29T15:30:00+05:30", true, T0},          /* 15:30 at +05:30 is 10:00 UTC */
    {"2026-11-29T15:30:00+0530", true, T0},           /* the break: was read as +05:00 */
    {"2026-11-29T15:00:00+05", true, T0},
    {"2026-11-29T04:30:00-05:30", true, T0},
    {"2026-11-29T04:30:00-0530", true, T0},
    {"2028-02-29T00:00:00Z", true, 1835395200LL},    /* a leap day */
    {"2026-11-29T10:00:00+05junk", false, 0},        /* the break: accepted */
    {"2026-02-31T00:00:00Z", false, 0},              /* the break: Feb 31 accepted */
    {"2026-02-29T00:00:00Z", false, 0},              /* 2026 is no leap year */
    {"2100-02-29T00:00:00Z", false, 0},              /* nor 2100 */
    {"2026-04-31", false, 0},
    {"2026-11-29T10:00:00+5:30", false, 0},
    {"2026-11-29T10:00:00+05:3", false, 0},
    {"2026-11-29T10:00:00+05:60", false, 0},
    {"2026-11-29T10:00:00+24:00", false, 0},
    {"2026-11-29T10:00:00+", false, 0},
    {"2026-11-29T10:00:00Zjunk", false, 0},
    {"2026-11-29T10:00:00.Z", false, 0},
    {"2026-11-29T24:00:00Z", false, 0},
    {"2026-11-29T10:60:00Z", false, 0},
    {"2026-11-29T10:00:61Z", false, 0},
    {"2026-11-29T1:00:00Z", false, 0},
    {"2026-11-29T10:0:00Z", false, 0},
    {"2026-11-29T10", false, 0},
    {"2026-11-29T", false, 0},
    {"2026-13-01", false, 0},
    {"2026-00-10", false, 0},
    {"2026-11-00", false, 0},
    {"2026-1-29", false, 0},
    {" 2026-11-29", false, 0},
    {"+2026-11-29", false, 0},
    {"-026-11-29", false, 0},
    {"20261-11-29", false, 0},
    {"2026-11-29x", false, 0},
    {"", false, 0},
};

static const struct {
    const char *in;
    bool ok;
    double want;
} dur[] = {
    {"90", true, 90},
    {"90s", true, 90},
    {"5m", true, 300},
    {"1.5m", true, 90},
    {"3h", true, 10800},
    {"2d", true, 172800},
    {"0", true, 0},
    {"0.5", true, 0.5},
    {".5m", true, 30},
    {"36500d", true, 36500.0 * 86400}, /* BT_DURATION_MAX: 100 years */
    {"36501d", false, 0},
    {"1e305d", false, 0},              /* the break: infinity cast to int64 */
    {"1e3", false, 0},
    {"99999999999999999999999999d", false, 0},
    {"inf", false, 0},
    {"infd", false, 0},
    {"nan", false, 0},
    {"0x10", false, 0},
    {"-5m", false, 0},
    {"+5m", false, 0},
    {" 5m", false, 0},
    {"5m ", false, 0},
    {"5 m", false, 0},
    {"5mm", false, 0},
    {"5w", false, 0},
    {".", false, 0},
    {"m", false, 0},
    {"", false, 0},
};

/* bt_parse_when with start = T0, end = T0 + 1 h, rel = T0 + 30 m */
static const struct {
    const char *in;
    bool ok;
    long long want;
} when[] = {
    {"+5m", true, T0 + 1800 + 300},
    {"-30m", true, T0},
    {"10:15", true, T0 + 900},
    {"9:59", true, T0 - 60},
    {"10:15:30", true, T0 + 930},
    {"2026-11-29T10:20:00Z", true, T0 + 1200},
    {"2026-11-29T15:50:00+0530", true, T0 + 1200},
    {"1795946400", true, T0},
    {"+1e305d", false, 0},             /* undefined behaviour before */
    {"-+5m", false, 0},
    {"--5m", false, 0},
    {"+ 5m", false, 0},
    {"+", false, 0},
    {"-1:30", false, 0},
    {"+1:30", false, 0},
    {" 1:30", false, 0},
    {"10:5", false, 0},
    {"10:15:", false, 0},
    {"24:00", false, 0},
    {"10:60", false, 0},
    {"123:00", false, 0},
    {" 1795946400", false, 0},
    {"1795946400x", false, 0},
    {"yesterday", false, 0},
    {"", false, 0},
};

int main(void)
{
    for (size_t i = 0; i < BT_ARRAY_LEN(iso); i++) {
        int64_t t = -1;
        bool ok = bt_parse_iso(iso[i].in, &t);
        if (iso[i].ok)
            OK(ok && t == iso[i].want, "iso '%s' -> %lld (got %s %lld)", iso[i].in, iso[i].want,
               ok ? "ok" : "rejected", (long long)t);
        else
            OK(!ok, "iso '%s' rejected", iso[i].in);
    }
    for (size_t i = 0; i < BT_ARRAY_LEN(dur); i++) {
        double d = -1;
        bool ok = bt_parse_duration(dur[i].in, &d);
        if (dur[i].ok)
            OK(ok && d == dur[i].want, "duration '%s' -> %g s (got %s %g)", dur[i].in,
               dur[i].want, ok ? "ok" : "rejected", d);
        else
            OK(!ok, "duration '%s' rejected", dur[i].in);
    }
    for (size_t i = 0; i < BT_ARRAY_LEN(when); i++) {
        int64_t t = -1;
        bool ok = bt_parse_when(when[i].in, T0, T0 + 3600, T0 + 1800, &t);
        if (when[i].ok)
            OK(ok && t == when[i].want, "when '%s' -> %lld (got %s %lld)", when[i].in,
               when[i].want, ok ? "ok" : "rejected", (long long)t);
        else
            OK(!ok, "when '%s' rejected", when[i].in);
    }
    return tap_done();
}
