/* The store's per-minute series (core/series.c): rings sized to what was observed
 * (a ten-minute `check` takes 16 slots, not the history's 1440), compact storage
 * (float, int16 arrival offsets) that never changes a number read back, growth that
 * keeps every minute inside the history, and the history's edge. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/model.h"
#include "tests/tap.h"

static const int64_t T0 = 1795946400; /* 2026-11-29 10:00:00 UTC, a minute */

static void put(struct bt_store *st, int64_t minute, double v, int64_t arrival)
{
    struct bt_sample s = {.t = minute, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = v};
    bt_store_add(st, &s, arrival);
}

static double at(const struct bt_store *st, int64_t minute)
{
    return bt_store_at(st, 0, BT_SIG_INPUT_TOKENS, minute);
}

static const struct bt_series *series(const struct bt_store *st)
{
    return bt_store_series_c(st, 0, BT_SIG_INPUT_TOKENS);
}

/* `check` asks for the last 10 minutes: with the default history of 1440 the ring
 * holds 16 floats (64 bytes), not 1440 doubles (11,520 bytes). */
static void test_check_window(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    for (int m = 0; m < 10; m++)
        put(&st, T0 + m * 60, 1000 + m, T0 + 3600);
    OK(series(&st)->cap == 16 && bt_series_bytes(series(&st)) == 64,
       "ten minutes of a 1440-minute history: 16 float slots, 64 bytes (cap %d, %zu bytes)",
       series(&st)->cap, bt_series_bytes(series(&st)));
    OK(at(&st, T0) == 1000 && at(&st, T0 + 540) == 1009 && isnan(at(&st, T0 - 60)),
       "the ten minutes read back; the minute before none");
    bt_store_free(&st);
}

/* Every number reads back exactly as stored: 2^24 + 1 = 16,777,217 is no float (the
 * nearest are ...216 and ...218), nor is 0.1, nor 123456789.125 (27 bits before the
 * point). */
static void test_exact(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 60);
    put(&st, T0, 16777216, T0 + 600);
    OK(series(&st)->f && !series(&st)->d, "2^24 is a float: kept as float");
    put(&st, T0 + 60, 16777217, T0 + 600);
    put(&st, T0 + 120, 0.1, T0 + 600);
    put(&st, T0 + 180, 123456789.125, T0 + 600);
    OK(series(&st)->d && !series(&st)->f, "2^24 + 1 arrives: the ring is double from then on");
    OK(at(&st, T0) == 16777216 && at(&st, T0 + 60) == 16777217 && at(&st, T0 + 120) == 0.1 &&
       at(&st, T0 + 180) == 123456789.125, "16777216, 16777217, 0.1 and 123456789.125 read back "
       "exactly (%.17g %.17g %.17g %.17g)", at(&st, T0), at(&st, T0 + 60), at(&st, T0 + 120),
       at(&st, T0 + 180));
    bt_store_free(&st);
}

/* A backfill: minute 100 first, then 0..99 (older): minute 0 makes the span 101
 * minutes; twice 16 slots is less, so the ring grows to 101 at once and loses none. */
static void test_grow_backward(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 180);
    put(&st, T0 + 100 * 60, 100, T0 + 7200);
    for (int m = 0; m < 100; m++)
        put(&st, T0 + m * 60, m, T0 + 7200);
    int bad = 0;
    for (int m = 0; m <= 100; m++)
        bad += at(&st, T0 + m * 60) != m;
    OK(bad == 0 && series(&st)->cap == 101, "101 minutes, the newest first: all kept (%d wrong), "
       "101 slots (%d)", bad, series(&st)->cap);
    bt_store_free(&st);
}

/* The history's edge: 20 minutes kept. Minutes 0..19, then 35: the window is
 * (35 - 20, 35] = 16..35, so 16..19 keep their values, 20..34 are empty, 0..15 gone. */
static void test_history_edge(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 20);
    for (int m = 0; m < 20; m++)
        put(&st, T0 + m * 60, m + 1, T0 + 3600);
    OK(series(&st)->cap == 20, "the ring stops at the history: 20 slots (%d)", series(&st)->cap);
    put(&st, T0 + 35 * 60, 36, T0 + 3600);
    bool kept = at(&st, T0 + 16 * 60) == 17 && at(&st, T0 + 19 * 60) == 20 &&
                at(&st, T0 + 35 * 60) == 36;
    int holes = 0, gone = 0;
    for (int m = 20; m < 35; m++)
        holes += isnan(at(&st, T0 + m * 60));
    for (int m = 0; m < 16; m++)
        gone += isnan(at(&st, T0 + m * 60));
    OK(kept && holes == 15 && gone == 16, "16..19 and 35 kept, 20..34 empty (%d of 15), 0..15 "
       "older than the history (%d of 16)", holes, gone);
    put(&st, T0 + 10 * 60, 5, T0 + 3600);
    OK(isnan(at(&st, T0 + 10 * 60)), "a sample older than the history is refused");
    bt_store_free(&st);
}

/* Replay: each minute visible from its first arrival. 100 s late fits int16; a
 * backfill 40,000 s late (11 h) does not: the offsets become int32, and the horizon
 * still cuts exactly at the arrival (visible at minute + 40,000, not a second before). */
static void test_arrival(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    bt_store_track_arrival(&st);
    put(&st, T0, 7, T0 + 100);
    OK(series(&st)->arr16 && !series(&st)->arr, "100 s late: int16 offsets");
    st.horizon = T0 + 99;
    OK(isnan(at(&st, T0)), "not visible a second before it arrived");
    st.horizon = T0 + 100;
    OK(at(&st, T0) == 7, "visible when it arrived");
    put(&st, T0 + 60, 8, T0 + 60 + 40000);
    OK(series(&st)->arr && !series(&st)->arr16, "40,000 s late: int32 offsets");
    st.horizon = T0 + 60 + 39999;
    OK(isnan(at(&st, T0 + 60)) && at(&st, T0) == 7, "the late minute hidden a second before, the "
       "first still visible");
    st.horizon = T0 + 60 + 40000;
    OK(at(&st, T0 + 60) == 8, "the late minute visible at its arrival");
    bt_store_free(&st);
}

/* bt_store_range reads what bt_store_at reads, minute by minute, across a wrapped
 * ring with holes, before its oldest and after its newest, and under a horizon. */
static void test_range(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 20);
    bt_store_track_arrival(&st);
    for (int m = 0; m < 20; m++)
        put(&st, T0 + m * 60, m + 1, T0 + m * 60 + 120 + m);
    put(&st, T0 + 35 * 60, 36, T0 + 35 * 60 + 130);
    int bad = 0;
    double v[60];
    for (int h = 0; h < 2; h++) {
        st.horizon = h ? T0 + 18 * 60 + 137 : 0; /* minute 18 arrived at +138 s: hidden */
        bt_store_range(&st, 0, BT_SIG_INPUT_TOKENS, T0 - 5 * 60 + 17, 50, v);
        for (int i = 0; i < 50; i++) {
            double w = at(&st, T0 + (i - 5) * 60);
            bad += !(isnan(w) ? isnan(v[i]) : v[i] == w);
        }
    }
    OK(bad == 0, "range = at for minutes -5..44 (wrapped ring, holes, a horizon): %d differ", bad);
    bt_store_free(&st);
}

/* The minute of route 0's INPUT_TOKENS visible at the store's horizon newest at or
 * before limit, by bt_store_at minute by minute (what bt_store_newest must say). */
static int64_t newest_ref(const struct bt_store *st, int64_t limit, int64_t oldest)
{
    for (int64_t m = limit - limit % 60; m >= oldest; m -= 60)
        if (!isnan(at(st, m)))
            return m;
    return 0;
}

static double sum_ref(const struct bt_store *st, int64_t from, int64_t through, int *n)
{
    double sum = 0;
    *n = 0;
    for (int64_t m = from; m <= through; m += 60)
        if (!isnan(at(st, m))) {
            sum += at(st, m);
            ++*n;
        }
    return sum;
}

/* A replay asks every route's sum since midnight and its newest minute at every step;
 * the store carries both forward (bt_store_sum, bt_store_day_sum, bt_store_newest) as
 * the horizon moves on, and they must be what a fresh loop over the minutes says: at
 * every step of a horizon walking 30 s at a time over an hour whose minutes arrive
 * 120 s + (m mod 7) x 30 s late, minute 10 at 2,000 s (a backfill), then a seek back,
 * then a value that is not a whole number (the loop's order is kept).
 * Worked by hand: at horizon T0 + 1,320 s (minute 20 + 120 s) minute m (value m + 1)
 * has arrived when 60 m + 120 + (m mod 7) 30 <= 1,320: minutes 0..18 (18: 1,080 + 120
 * = 1,200) but not 19 (1,140 + 150) nor 20 (1,200 + 180), and not 10 (600 + 2,000):
 * 1 + ... + 19 - 11 = 179 over 18 minutes; at T0 + 2,600 s every minute 0..20 has
 * arrived (20: 1,200 + 180; 10: 600 + 2,000): 1 + ... + 21 = 231. */
static void test_carried_sums(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    bt_store_track_arrival(&st);
    for (int m = 0; m < 60; m++)
        put(&st, T0 + m * 60, m + 1, T0 + m * 60 + (m == 10 ? 2000 : 120 + (m % 7) * 30));
    int64_t day = T0 - T0 % 86400;
    int bad = 0, badn = 0, steps = 0;
    for (int64_t h = T0 + 60; h <= T0 + 3900; h += 30, steps++) {
        st.horizon = h;
        int64_t through = h - h % 60;
        int n, rn;
        double v = bt_store_sum(&st, 0, BT_SIG_INPUT_TOKENS, day, through, &n);
        double w = sum_ref(&st, day, through, &rn);
        double d = bt_store_day_sum(&st, 0, BT_SIG_DAY_INPUT_TOKENS, through);
        bad += v != w || n != rn || (rn ? d != w : !isnan(d));
        badn += bt_store_newest(&st, 0, BT_SIG_INPUT_TOKENS, through) != newest_ref(&st, through, T0);
    }
    OK(bad == 0 && badn == 0, "%d steps of a moving horizon: sums as the loop's (%d differ), "
       "newest minutes as the loop's (%d differ)", steps, bad, badn);
    st.horizon = T0 + 1320;
    int n;
    double v = bt_store_sum(&st, 0, BT_SIG_INPUT_TOKENS, day, T0 + 1200, &n);
    OK(v == 179 && n == 18 && bt_store_day_sum(&st, 0, BT_SIG_DAY_INPUT_TOKENS, T0 + 1200) == 179,
       "sought back to minute 20 + 120 s: 179 over 18 minutes (got %g over %d)", v, n);
    OK(bt_store_newest(&st, 0, BT_SIG_INPUT_TOKENS, T0 + 1200) == T0 + 18 * 60,
       "its newest minute: 18");
    st.horizon = T0 + 2600;
    v = bt_store_sum(&st, 0, BT_SIG_INPUT_TOKENS, day, T0 + 1200, &n);
    OK(v == 231 && n == 21, "at T0 + 2,600 s minute 10 (the backfill) counts: all of 1..21, 231 "
       "(got %g over %d)", v, n);
    put(&st, T0 + 30 * 60, 0.1, T0 + 30 * 60 + 120); /* a value no whole number */
    put(&st, T0 + 31 * 60, 0.2, T0 + 31 * 60 + 120);
    st.horizon = 0;
    for (int k = 0; k < 2; k++) {
        double w = sum_ref(&st, day, T0 + 3540, &n);
        v = bt_store_sum(&st, 0, BT_SIG_INPUT_TOKENS, day, T0 + 3540, &n);
        OK(v == w, "with 0.1 and 0.2 among them: the loop's order (%.17g, loop %.17g)", v, w);
    }
    bt_store_free(&st);
}

/* A recording's series of one route that arrived together share one array of offsets
 * (bt_store_share_arrivals) and read back as before; a sample taken afterwards (a
 * plan's what-if) changes its own series' offsets only. Input and output tokens of
 * minutes 0..9 arrive at +190 s, cache reads too except minute 4 (+900 s), minute 7
 * has no cache read (its offset is never read): input and output share, cache reads
 * keep their own. */
static void test_shared_arrivals(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    bt_store_track_arrival(&st);
    for (int m = 0; m < 10; m++) {
        struct bt_sample a = {.t = T0 + m * 60, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = m};
        struct bt_sample b = a, c = a;
        b.signal = BT_SIG_OUTPUT_TOKENS;
        c.signal = BT_SIG_CACHE_READ;
        bt_store_add(&st, &a, T0 + m * 60 + 190);
        bt_store_add(&st, &b, T0 + m * 60 + 190);
        if (m != 7)
            bt_store_add(&st, &c, T0 + m * 60 + (m == 4 ? 900 : 190));
    }
    double before[3][10];
    const enum bt_signal sig[3] = {BT_SIG_INPUT_TOKENS, BT_SIG_OUTPUT_TOKENS, BT_SIG_CACHE_READ};
    st.horizon = T0 + 4 * 60 + 200;
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < 10; m++)
            before[i][m] = bt_store_at(&st, 0, sig[i], T0 + m * 60);
    bt_store_share_arrivals(&st);
    const struct bt_series *in = bt_store_series_c(&st, 0, BT_SIG_INPUT_TOKENS),
                           *out = bt_store_series_c(&st, 0, BT_SIG_OUTPUT_TOKENS),
                           *cr = bt_store_series_c(&st, 0, BT_SIG_CACHE_READ);
    OK(in->arr16 == out->arr16 && cr->arr16 != in->arr16 && st.narr_pool == 2,
       "input and output share their offsets, cache reads (minute 4 later) keep theirs (%zu arrays)",
       st.narr_pool);
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < 10; m++) {
            double v = bt_store_at(&st, 0, sig[i], T0 + m * 60);
            bad += isnan(v) ? !isnan(before[i][m]) : v != before[i][m];
        }
    OK(bad == 0 && isnan(bt_store_at(&st, 0, BT_SIG_CACHE_READ, T0 + 240)) &&
       bt_store_at(&st, 0, BT_SIG_INPUT_TOKENS, T0 + 240) == 4,
       "every minute reads as before (%d differ): minute 4 visible for input, not yet for cache reads", bad);
    struct bt_sample late = {.t = T0 + 2 * 60, .route = 0, .signal = BT_SIG_OUTPUT_TOKENS, .value = 2};
    struct bt_sample again = {.t = T0 + 9 * 60 + 60, .route = 0, .signal = BT_SIG_OUTPUT_TOKENS, .value = 10};
    bt_store_add(&st, &late, T0 + 100); /* earlier than +190: output's own copy now */
    bt_store_add(&st, &again, T0 + 10 * 60 + 190);
    for (int m = 39; m >= 11; m--) { /* input's ring grows (16 -> 40 slots) from shared offsets */
        struct bt_sample g = {.t = T0 + m * 60, .route = 0, .signal = BT_SIG_INPUT_TOKENS, .value = m};
        bt_store_add(&st, &g, T0 + m * 60 + 190);
    }
    st.horizon = T0 + 39 * 60 + 190;
    bool grown = in->cap > 16 && bt_store_at(&st, 0, BT_SIG_INPUT_TOKENS, T0 + 39 * 60) == 39 &&
                 bt_store_at(&st, 0, BT_SIG_INPUT_TOKENS, T0 + 4 * 60) == 4;
    st.horizon = T0 + 130;
    OK(out->arr16 != in->arr16 && !out->arr_shared && !in->arr_shared && grown &&
       bt_store_at(&st, 0, BT_SIG_OUTPUT_TOKENS, T0 + 120) == 2 &&
       isnan(bt_store_at(&st, 0, BT_SIG_INPUT_TOKENS, T0 + 120)),
       "a sample arriving earlier afterwards: output copies its offsets; input grown: its own");
    bt_store_free(&st);
}

/* A latency of 2383.7 ms is no float: the ring keeps it as the whole 23,837 with one
 * decimal place (4 bytes, not a double's 8), and reads back the double strtod gives
 * "2383.7"; 0.25 then moves the ring to two places (238370, 25); a value with more
 * places than four (0.123456) turns it double, every earlier value unchanged. */
static void test_decimals(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 60);
    put(&st, T0, 2383.7, T0 + 600);
    put(&st, T0 + 60, 12, T0 + 600);
    OK(series(&st)->f && !series(&st)->d && series(&st)->scale == 1 && at(&st, T0) == 2383.7 &&
       at(&st, T0 + 60) == 12, "2383.7 and 12: floats of one decimal place, read back exactly");
    put(&st, T0 + 120, 0.25, T0 + 600);
    OK(series(&st)->f && series(&st)->scale == 2 && at(&st, T0) == 2383.7 && at(&st, T0 + 120) == 0.25,
       "0.25 arrives: two places, 2383.7 unchanged");
    double r[6];
    bt_store_range(&st, 0, BT_SIG_INPUT_TOKENS, T0 - 60, 6, r);
    OK(isnan(r[0]) && r[1] == 2383.7 && r[2] == 12 && r[3] == 0.25 && isnan(r[4]) && isnan(r[5]),
       "a range of them reads the same: -, 2383.7, 12, 0.25, -, -");
    put(&st, T0 + 180, 0.123456, T0 + 600);
    OK(series(&st)->d && !series(&st)->f && at(&st, T0) == 2383.7 && at(&st, T0 + 60) == 12 &&
       at(&st, T0 + 120) == 0.25 && at(&st, T0 + 180) == 0.123456 && isnan(at(&st, T0 + 240)),
       "0.123456 arrives: double from then on, every value read back as stored");
    bt_store_free(&st);
}

/* A live store's day sum with no day-sum datapoint: the minutes since midnight, read a
 * range at a time. Minute i of the day holds (i mod 7) + 1, every fifth minute (i mod 5
 * = 0) none. Through minute 599 (asked at 599 min 30 s, not on the minute): the 600
 * minutes hold 85 x (1 + ... + 7) + (1 + ... + 5) = 2,395, less the 120 fifth minutes
 * (k = 0..119, 5k mod 7 cycling 0, 5, 3, 1, 6, 4, 2: 17 x 28 + 1 = 477): 1,918. Through
 * minute 256: 36 x 28 + 15 = 1,023 less k = 0..51 (7 x 28 + 1 + 6 + 4 = 207): 816. */
static void test_day_sum_minutes(void)
{
    struct bt_store st;
    bt_store_init(&st, 1, 1440);
    int64_t day = T0 - T0 % 86400;
    for (int i = 0; i < 600; i++)
        if (i % 5)
            put(&st, day + 60 * (int64_t)i, i % 7 + 1, day + 60 * (int64_t)i + 120);
    double a = bt_store_day_sum(&st, 0, BT_SIG_DAY_INPUT_TOKENS, day + 599 * 60 + 30);
    double b = bt_store_day_sum(&st, 0, BT_SIG_DAY_INPUT_TOKENS, day + 256 * 60);
    OK(a == 1918 && b == 816, "tokens today from the minutes: 1,918 through minute 599, 816 "
       "through 256 (got %g, %g)", a, b);
    bt_store_free(&st);
}

int main(void)
{
    test_check_window();
    test_day_sum_minutes();
    test_exact();
    test_grow_backward();
    test_history_edge();
    test_arrival();
    test_range();
    test_carried_sums();
    test_shared_arrivals();
    test_decimals();
    return tap_done();
}
