#include "core/speed.h"

#include <math.h>
#include <string.h>

#include "core/util.h"

double bt_otps(double output_tokens, double invocations, double latency_avg_ms, double ttft_ms)
{
    if (!isfinite(output_tokens) || !isfinite(invocations) || !isfinite(latency_avg_ms) ||
        !isfinite(ttft_ms) || invocations <= 0 || output_tokens < 0)
        return NAN;
    double gen_s = (latency_avg_ms - ttft_ms) / 1000;
    if (!(gen_s > 0))
        return NAN; /* the first token came with the last: no generation time to divide by */
    return output_tokens / invocations / gen_s;
}

double bt_otps_at(const struct bt_store *st, int r, int64_t m)
{
    return bt_otps(bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m), bt_store_at(st, r, BT_SIG_INVOCATIONS, m),
                   bt_store_at(st, r, BT_SIG_LATENCY_AVG, m), bt_store_at(st, r, BT_SIG_TTFT_AVG, m));
}

struct mean {
    double otps, ttft, inv, opc;
    int n_otps, n_ttft, n_inv, n_opc;
};

/* One minute's figures into the sums (bt_otps inline: a frame adds ~130,000 minutes). */
static inline void mean_add(struct mean *o, double out, double inv, double t, double lat)
{
    bool ti = isfinite(inv), tt = isfinite(t), to = isfinite(out);
    if (tt && t >= 0) {
        o->ttft += t;
        o->n_ttft++;
    }
    if (!ti || inv < 0)
        return;
    o->inv += inv;
    o->n_inv++;
    if (inv == 0 || !to || out < 0)
        return;
    o->opc += out / inv;
    o->n_opc++;
    if (!tt || !isfinite(lat))
        return;
    double gen_s = (lat - t) / 1000; /* as bt_otps: no generation time, no OTPS */
    double v = gen_s > 0 ? out / inv / gen_s : NAN;
    if (isfinite(v)) {
        o->otps += v;
        o->n_otps++;
    }
}

static void mean_end(struct mean *o)
{
    o->otps = o->n_otps ? o->otps / o->n_otps : NAN;
    o->ttft = o->n_ttft ? o->ttft / o->n_ttft : NAN;
    o->inv = o->n_inv ? o->inv / o->n_inv : NAN;
    o->opc = o->n_opc ? o->opc / o->n_opc : NAN;
}

/* The means of the trailing hour (minutes [from, from + HOUR)) and of the recent
 * minutes after it, each signal read once over the whole span: one range a signal
 * instead of two, and the minutes added in the same order as two passes would add
 * them (the same sums to the last bit). */
static void means(const struct bt_store *st, int r, int64_t from, struct mean *hour, struct mean *now)
{
    enum { SPAN = BT_SPEED_HOUR + BT_SPEED_RECENT };
    double out_v[SPAN], inv_v[SPAN], ttft_v[SPAN], lat_v[SPAN];
    memset(hour, 0, sizeof *hour);
    memset(now, 0, sizeof *now);
    bt_store_range(st, r, BT_SIG_INVOCATIONS, from, SPAN, inv_v);
    bt_store_range(st, r, BT_SIG_TTFT_AVG, from, SPAN, ttft_v);
    /* output tokens and latency count only in a minute with calls (mean_add): an
     * idle route's 65 minutes need not be read for them */
    bool calls = false;
    for (int i = 0; i < SPAN && !calls; i++)
        calls = isfinite(inv_v[i]) && inv_v[i] > 0;
    if (calls) {
        bt_store_range(st, r, BT_SIG_OUTPUT_TOKENS, from, SPAN, out_v);
        bt_store_range(st, r, BT_SIG_LATENCY_AVG, from, SPAN, lat_v);
    } else {
        for (int i = 0; i < SPAN; i++)
            out_v[i] = lat_v[i] = NAN;
    }
    for (int i = 0; i < SPAN; i++)
        mean_add(i < BT_SPEED_HOUR ? hour : now, out_v[i], inv_v[i], ttft_v[i], lat_v[i]);
    mean_end(hour);
    mean_end(now);
}

void bt_speed_compute(const struct bt_store *st, int r, int64_t m, struct bt_speed *s)
{
    memset(s, 0, sizeof *s);
    s->otps = s->otps_hour = s->ttft = s->ttft_hour = s->inv = s->inv_hour = NAN;
    s->out_per_call = s->out_per_call_hour = s->otps_floor = s->ttft_ceiling = NAN;
    if (!m)
        return;
    m = bt_minute_floor(m);
    struct mean now, hour;
    int64_t split = m - (BT_SPEED_RECENT - 1) * 60;
    means(st, r, split - BT_SPEED_HOUR * 60, &hour, &now);
    s->otps = now.otps;
    s->otps_hour = hour.otps;
    s->ttft = now.ttft;
    s->ttft_hour = hour.ttft;
    s->inv = now.inv;
    s->inv_hour = hour.inv;
    s->out_per_call = now.opc;
    s->out_per_call_hour = hour.opc;
    s->recent_points = now.n_otps;
    s->hour_points = hour.n_otps;
    if (hour.n_otps < BT_SPEED_MIN_HOUR || !(hour.otps > 0))
        return;
    /* the lines the rules judge by (the detail's speed graphs draw them) */
    s->otps_floor = BT_SLOWDOWN_RATIO * hour.otps;
    if (isfinite(hour.ttft) && hour.ttft > 0)
        s->ttft_ceiling = 1.5 * hour.ttft;
    if (now.n_otps < 3)
        return;
    bool flat_traffic = isfinite(now.inv) && isfinite(hour.inv) && now.inv <= BT_SLOWDOWN_GROWTH * hour.inv;
    s->slowdown = now.otps < s->otps_floor && flat_traffic;
    bool flat_tokens = isfinite(now.opc) && isfinite(hour.opc) && hour.opc > 0 &&
                       fabs(now.opc - hour.opc) <= 0.2 * hour.opc;
    s->queueing = isfinite(now.ttft) && isfinite(s->ttft_ceiling) && now.ttft >= s->ttft_ceiling &&
                  flat_tokens;
}
