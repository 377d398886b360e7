/* Times as users type them (replay --at, export --from/--to, the replay's g). */
#include "core/when.h"

#include <ctype.h>
#include <stdlib.h>

#include "core/util.h"

/* "14:32" or "14:32:05": one or two digits of hour, two of minute and second. */
static bool parse_hhmm(const char *s, int *hh, int *mm, int *ss)
{
    const char *p = s;
    int n = 0;
    *hh = *mm = *ss = 0;
    for (; isdigit((unsigned char)*p) && n < 3; p++, n++)
        *hh = *hh * 10 + (*p - '0');
    if (n < 1 || n > 2 || *p != ':' || !isdigit((unsigned char)p[1]) ||
        !isdigit((unsigned char)p[2]))
        return false;
    *mm = (p[1] - '0') * 10 + (p[2] - '0');
    p += 3;
    if (*p == ':') {
        if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]))
            return false;
        *ss = (p[1] - '0') * 10 + (p[2] - '0');
        p += 3;
    }
    return !*p && *hh < 24 && *mm < 60 && *ss < 60;
}

bool bt_parse_when(const char *s, int64_t start, int64_t end, int64_t rel, int64_t *out)
{
    double d;
    if (s[0] == '-' || s[0] == '+') {
        /* bounded by BT_DURATION_MAX, so the conversion is defined */
        if (!bt_parse_duration(s + 1, &d))
            return false;
        *out = rel + (s[0] == '-' ? -(int64_t)d : (int64_t)d);
        return true;
    }
    int hh, mm, ss;
    if (parse_hhmm(s, &hh, &mm, &ss)) {
        /* the time of day on the day nearest the reference that falls in range */
        int64_t ref = rel ? rel : start;
        int64_t day = ref - (ref % 86400);
        int64_t best = 0;
        bool best_in = false;
        for (int k = -1; k <= 1; k++) {
            int64_t c = day + k * 86400 + hh * 3600 + mm * 60 + ss;
            bool in = (!start || c >= start - 60) && (!end || c <= end + 60);
            bool closer = !best || llabs(c - ref) < llabs(best - ref);
            if ((in && (!best_in || closer)) || (!in && !best_in && closer)) {
                best = c;
                best_in = in;
            }
        }
        *out = best;
        return true;
    }
    int64_t t;
    if (bt_parse_iso(s, &t)) {
        *out = t;
        return true;
    }
    long v;
    if (isdigit((unsigned char)s[0]) && bt_parse_long(s, 1000000000L, 9999999999L, &v)) {
        *out = v;
        return true;
    }
    return false;
}
