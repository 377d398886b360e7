/* Time and duration parsing (issue 16 item 8: "+0530" read as +05:00, "+05junk" and
 * Feb 31 accepted, "1e305d" became infinity cast to int64). Every parser of a time a
 * user or a file gives: bt_parse_iso, bt_parse_duration, bt_parse_when. UBSan
 * catches an out-of-range conversion; what is accepted must be in range and, for an
 * ISO time, print back as the same instant. */
#include <math.h>
#include <string.h>

#include "core/recording.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[128];
    if (size >= sizeof s)
        size = sizeof s - 1;
    memcpy(s, data, size);
    s[size] = '\0';

    int64_t t;
    if (bt_parse_iso(s, &t)) {
        /* years 0000-9999 and offsets under a day: within these bounds (when: also
     * epoch seconds up to 9999999999 and relative times up to 100 years) */
        if (t < -62167219200LL - 86400 || t > 253402300799LL + 86400)
            abort();
        char iso[40];
        int64_t back;
        if (t >= 0 && t < 253402300800LL) {
            bt_fmt_iso(t, iso, sizeof iso);
            if (!bt_parse_iso(iso, &back) || back != t)
                abort();
        }
    }
    double d;
    if (bt_parse_duration(s, &d) && !(d >= 0 && d <= BT_DURATION_MAX))
        abort();
    int64_t w;
    const int64_t start = 1795910400, end = start + 86400;
    if (bt_parse_when(s, start, end, start + 3600, &w) && (w < -62167219200LL - 2 * 86400 || w > 253402300799LL + 2 * 86400))
        abort();
    return 0;
}
