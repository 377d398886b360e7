/* One formatter per figure (core/format.h). Expected strings are written out by
 * hand from the rules in the header. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/format.h"
#include "core/util.h"
#include "tests/tap.h"

#define F(fn, v, want) do { char b_[BT_FMT_LONG]; STREQ(fn(v, b_, sizeof b_), want, #fn " " #v); } while (0)

int main(void)
{
    F(bt_fmt_tokens, 0, "0");
    F(bt_fmt_tokens, 12, "12");
    F(bt_fmt_tokens, 12.25, "12.3");
    F(bt_fmt_tokens, 999, "999");
    F(bt_fmt_tokens, 1234, "1.2k");
    F(bt_fmt_tokens, 9960, "10k");          /* rounds into the next format, not "10.0k" */
    F(bt_fmt_tokens, 350000, "350k");
    F(bt_fmt_tokens, 999600, "1.00M");      /* not "1000k" */
    F(bt_fmt_tokens, 11540000, "11.54M");
    F(bt_fmt_tokens, 20000000, "20.00M");
    F(bt_fmt_tokens, -11000, "-11k");
    F(bt_fmt_tokens, -0.04, "0");           /* never "-0" */
    F(bt_fmt_tokens, 4.5e9, "4.5G");
    F(bt_fmt_tokens, 1e308, ">999T");       /* never "infG" or an exponent */
    F(bt_fmt_tokens, NAN, "-");
    F(bt_fmt_tokens, INFINITY, "-");
    F(bt_fmt_count, 2.4, "2");
    F(bt_fmt_count, 136, "136");
    F(bt_fmt_pct, 38.44, "38.4");
    F(bt_fmt_pct, -0.04, "0.0");            /* never "-0.0" */
    F(bt_fmt_pct, -64.94, "-64.9");
    F(bt_fmt_pct, 1e300, ">99999");
    F(bt_fmt_pct, NAN, "-");
    /* with how sure it is, as check's text and the overview print a headroom % */
#define FQ(v, q, want) do { char b_[BT_FMT_SHORT]; STREQ(bt_fmt_pct_q(v, q, b_, sizeof b_), want, "bt_fmt_pct_q " #v " " #q); } while (0)
    FQ(55.84, BT_QL_UPPER, "<55.8");      /* at most: a headroom from a lower-bound use */
    FQ(38.44, BT_QL_LOWER, ">38.4");      /* at least */
    FQ(12.0, BT_QL_ESTIMATE, "~12.0");
    FQ(43.6, BT_QL_KNOWN, "43.6");
    FQ(100.0, BT_QL_IDLE, "100.0");
    FQ(NAN, BT_QL_UPPER, "-");           /* unknown: no mark on a dash */
    FQ(1e300, BT_QL_LOWER, ">>99999");   /* the bound on the capped form */
    F(bt_fmt_latency, 850, "850ms");
    F(bt_fmt_latency, 5300, "5.3s");        /* never "5.3k" for a latency */
    F(bt_fmt_latency, 999.6, "1.0s");
    F(bt_fmt_latency, 42000, "42s");
    F(bt_fmt_latency, 150000, "2.5m");
    F(bt_fmt_latency, NAN, "-");
    F(bt_fmt_latency, -5, "-");
    F(bt_fmt_age, 45, "45s");
    F(bt_fmt_age, 720, "12m");
    F(bt_fmt_age, 11100, "3h05m");
    F(bt_fmt_age, 187200, "2d04h");
    F(bt_fmt_grouped, 10000000, "10,000,000");
    F(bt_fmt_grouped, 1e15, "1,000,000,000,000,000");
    F(bt_fmt_grouped, -1234, "-1,234");
    F(bt_fmt_grouped, 999, "999");
    F(bt_fmt_grouped, 1234.25, "1,234.25");
    F(bt_fmt_grouped, 0.01, "0.01");
    {
        char b[BT_FMT_LONG];
        STREQ(bt_fmt_plain(10000000, 0, b, sizeof b), "10000000", "plain 1e7 has no exponent");
        STREQ(bt_fmt_plain(1e15, 0, b, sizeof b), "1000000000000000", "plain 1e15");
        STREQ(bt_fmt_plain(38.44, 1, b, sizeof b), "38.4", "plain one decimal");
        STREQ(bt_fmt_plain(38.0, 1, b, sizeof b), "38", "plain drops .0");
        STREQ(bt_fmt_plain(-0.01, 1, b, sizeof b), "0", "plain never -0");
        STREQ(bt_fmt_plain(0.125, 6, b, sizeof b), "0.125", "plain keeps needed decimals");
        STREQ(bt_fmt_plain(NAN, 0, b, sizeof b), "", "plain unknown is empty");
        /* whole numbers skip printf: the text %.*f gives, its zeros trimmed (ties round
         * to even, -0 is 0, 2^53 - 1 whole) */
        static const struct { double v; int d; const char *want; } ints[] = {
            {2.5, 0, "2"}, {3.5, 0, "4"}, {-2.5, 0, "-2"}, {0.5, 0, "0"}, {-0.4, 0, "0"},
            {-0.0, 3, "0"}, {-7.0, 1, "-7"}, {123456.0, 3, "123456"}, {99.999, 0, "100"},
            {9007199254740991.0, 0, "9007199254740991"}, {-1234567.0, 6, "-1234567"}};
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            bt_fmt_plain(ints[i].v, ints[i].d, b, sizeof b);
            OK(!strcmp(b, ints[i].want), "plain %.17g at %d decimals is %s (got %s)", ints[i].v,
               ints[i].d, ints[i].want, b);
        }
        /* a value rounded to its decimals (bt_round_to) skips printf too: the same
         * text as %.*f with its zeros trimmed, for 20,000 values of every size */
        int bad = 0;
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 20000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int d = (int)(x % 7);
            double v = (double)(int64_t)(x >> 11) / (double)(1ull << (x % 53));
            v = (x & 1) ? bt_round_to(v, d) : v; /* rounded (the fast path) or not */
            char want[64];
            snprintf(want, sizeof want, "%.*f", d, v);
            char *dot = strchr(want, '.');
            if (dot) {
                char *e = want + strlen(want) - 1;
                while (e > dot && *e == '0')
                    *e-- = '\0';
                if (e == dot)
                    *e = '\0';
            }
            if (!strcmp(want, "-0"))
                snprintf(want, sizeof want, "0");
            bt_fmt_plain(v, d, b, sizeof b);
            if (strcmp(b, want) && bad++ < 5)
                printf("# plain %.17g at %d decimals: %s, printf %s\n", v, d, b, want);
        }
        OK(!bad, "plain: 20,000 values give printf's text (%d differ)", bad);
    }
    {
        /* A fixed field cut visibly (bt_strlcpy_cut, bt_fmt_cut): the text whole when it
         * fits, else as many bytes as leave room for "..." and the NUL (size - 4), backed
         * off to a character boundary. */
        char b[8];
        OK(bt_strlcpy_cut(b, "abcdefg", sizeof b) && !strcmp(b, "abcdefg"),
           "7 bytes fit in 8 whole (%s)", b);
        OK(!bt_strlcpy_cut(b, "abcdefgh", sizeof b) && !strcmp(b, "abcd..."),
           "8 bytes into 8: 4 kept, then ... (%s)", b);
        /* e-acute is 2 bytes: 5 of them are 10; size 8 keeps bytes 0..3 (two whole) */
        OK(!bt_strlcpy_cut(b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", sizeof b) &&
               !strcmp(b, "\xc3\xa9\xc3\xa9..."), "cut between characters (%s)", b);
        /* size 7 would keep 3 bytes, the middle of the second: it keeps one */
        OK(!bt_strlcpy_cut(b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 7) &&
               !strcmp(b, "\xc3\xa9..."), "never half a character (%s)", b);
        OK(!bt_strlcpy_cut(b, "abcdefgh", 3) && !strcmp(b, ".."), "a tiny field holds what fits of the mark");
        char m[24];
        OK(!bt_fmt_cut(m, sizeof m, "%s failing: %s", "CloudWatch", "connection reset by peer") &&
               !strcmp(m, "CloudWatch failing: ..."), "formatted whole, then cut: %s", m);
        OK(bt_fmt_cut(m, sizeof m, "%s failing", "quotas") && !strcmp(m, "quotas failing"),
           "a message that fits is unchanged");
    }
    /* bt_median: the values a sort gives, by selection (the spend baseline, the burndown) */
    {
        double v1[] = {5}, v2[] = {7, 3}, v3[] = {2, 9, 4}, v4[] = {1, 1, 1, 8}, v5[] = {0.5, -2, 3, 3, 3, -2};
        OK(isnan(bt_median(v1, 0)), "bt_median of none is NAN");
        OK(bt_median(v1, 1) == 5, "bt_median of one");
        OK(bt_median(v2, 2) == 5, "bt_median of two: their mean");
        OK(bt_median(v3, 3) == 4, "bt_median of three: the middle one");
        OK(bt_median(v4, 4) == 1, "bt_median with repeats");
        OK(bt_median(v5, 6) == 1.75, "bt_median of six: (0.5 + 3) / 2");
        unsigned x = 12345; /* every size up to a baseline's, against an insertion sort */
        bool all = true;
        for (int k = 1; k <= 190 && all; k++) {
            for (int round = 0; round < 20; round++) {
                double v[190], w[190];
                for (int i = 0; i < k; i++) {
                    x = x * 1103515245u + 12345u;
                    v[i] = w[i] = round % 2 ? (double)(x >> 16) / 65536 : (double)((x >> 16) % 4);
                }
                for (int i = 1; i < k; i++)
                    for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
                        double t = w[j];
                        w[j] = w[j - 1];
                        w[j - 1] = t;
                    }
                double want = k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
                all &= bt_median(v, k) == want;
            }
        }
        OK(all, "bt_median agrees with a sort for 1 to 190 values, repeats and not");
    }
    {
        /* bt_buf_fixed0 writes what "%.0f" writes: ties to even, "-0", huge and NaN
         * through printf, and a spread of values either side of each power of ten */
        static const double v[] = {0, -0.0, 0.5, 1.5, 2.5, -0.5, -0.4, -2.5, 0.49999999999999994,
                                   123456.5, 999999999999999.0, -999999999999999.0, 1e15, 1e300,
                                   -1e300, 4503599627370495.5, NAN, INFINITY, -INFINITY, 86400,
                                   1796235238, 632000.4999};
        bool all = true;
        char want[400], got[BT_FIXED0_MAX];
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            struct bt_buf b = {0};
            bt_buf_fixed0(&b, v[i]);
            snprintf(want, sizeof want, "%.0f", v[i]);
            if (strcmp(bt_buf_str(&b), want)) {
                printf("# %.17g: %s, printf %s\n", v[i], bt_buf_str(&b), want);
                all = false;
            }
            if (strcmp(bt_fmt_fixed0(v[i], got, sizeof got), want)) {
                printf("# bt_fmt_fixed0 %.17g: %s, printf %s\n", v[i], got, want);
                all = false;
            }
            /* cut as snprintf cuts: 3 bytes hold two characters */
            char cut[3], want3[3];
            snprintf(want3, sizeof want3, "%.0f", v[i]);
            if (strcmp(bt_fmt_fixed0(v[i], cut, sizeof cut), want3)) {
                printf("# bt_fmt_fixed0 %.17g in 3 bytes: %s, printf %s\n", v[i], cut, want3);
                all = false;
            }
            bt_buf_free(&b);
        }
        uint64_t x = 88172645463325252ull;
        for (int i = 0; i < 200000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            double d = (double)(x >> 11) / (double)(1ull << 53) * pow(10, (double)(i % 17)) *
                       (i & 1 ? -1 : 1);
            if (i % 5 == 0)
                d = floor(d) + 0.5; /* a tie */
            struct bt_buf b = {0};
            bt_buf_fixed0(&b, d);
            snprintf(want, sizeof want, "%.0f", d);
            if (strcmp(bt_buf_str(&b), want) || strcmp(bt_fmt_fixed0(d, got, sizeof got), want)) {
                if (all)
                    printf("# %.17g: %s and %s, printf %s\n", d, bt_buf_str(&b), got, want);
                all = false;
            }
            bt_buf_free(&b);
        }
        OK(all, "bt_buf_fixed0 and bt_fmt_fixed0 write what printf writes at precision 0 for ties, -0, whole numbers, huge and 200,000 others");
    }
    return tap_done();
}
