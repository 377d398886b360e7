/* bt_store_set_horizon (core/model.c) seeking forward applies only the events
 * between the old horizon and the new one (issue 38: every seek replayed the whole
 * log). The model it leaves must be the one a rebuild from the recording header
 * gives, at every horizon: two stores take the same events; store A seeks forward
 * step by step (the incremental path), store B rebuilds at each horizon (a seek to
 * "everything" first, so every seek is a rebuild), and their routes' quotas, settings
 * and source status are compared field by field. */
#include <math.h>
#include <string.h>

#include "core/config.h"
#include "core/model.h"
#include "core/util.h"
#include "tests/tap.h"

#define NR 2

static void quota_ev(struct bt_store *s, int64_t t, int route, double v)
{
    struct bt_event e = {.t = t, .type = BT_EV_QUOTA, .route = route, .source = BT_SRC_QUOTAS,
                         .quota_kind = BT_Q_TPM, .value = v, .quota_source = BT_QS_SERVICE_QUOTAS};
    bt_strlcpy(e.code, "L-TEST", sizeof e.code);
    bt_store_event(s, &e);
}

static void status_ev(struct bt_store *s, int64_t t, enum bt_event_type type, int route,
                      const char *text)
{
    struct bt_event e = {.t = t, .type = type, .route = route, .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(e.text, text, sizeof e.text);
    bt_store_event(s, &e);
}

static void max_tokens_ev(struct bt_store *s, int64_t t, int route, double v)
{
    struct bt_event e = {.t = t, .type = BT_EV_SETTING, .route = route, .source = BT_SRC_QUOTAS,
                         .setting = BT_SET_MAX_TOKENS, .value = v};
    bt_store_event(s, &e);
}

static void feed(struct bt_store *s)
{
    quota_ev(s, 100, 0, 1000);
    status_ev(s, 200, BT_EV_ERROR, -1, "timed out");
    status_ev(s, 300, BT_EV_OK, 1, "");
    quota_ev(s, 400, 0, 2000);
    max_tokens_ev(s, 400, 1, 4096);
    status_ev(s, 500, BT_EV_OK, -1, "");
    quota_ev(s, 500, 1, 7000);
}

/* The same model: quotas, max_tokens, every source's status. */
static bool same(const struct bt_store *a, const struct bt_route *ra, const struct bt_store *b,
                 const struct bt_route *rb)
{
    for (int r = 0; r < NR; r++) {
        for (int k = 0; k < BT_Q_COUNT; k++) {
            double x = ra[r].quota[k].value, y = rb[r].quota[k].value;
            if (!(x == y || (isnan(x) && isnan(y))) || ra[r].quota[k].source != rb[r].quota[k].source)
                return false;
        }
        if (ra[r].max_tokens != rb[r].max_tokens)
            return false;
        for (int src = 0; src < BT_SRC_COUNT; src++) {
            const struct bt_source_status *x = bt_store_status_c(a, r, (enum bt_source)src);
            const struct bt_source_status *y = bt_store_status_c(b, r, (enum bt_source)src);
            if (x->last_ok != y->last_ok || x->last_error != y->last_error ||
                strcmp(x->error, y->error))
                return false;
        }
    }
    return true;
}

int main(void)
{
    struct bt_route base[NR], ra[NR], rb[NR];
    for (int r = 0; r < NR; r++) {
        bt_route_defaults(&base[r]);
        base[r].max_tokens = 1024;
    }
    memcpy(ra, base, sizeof ra);
    memcpy(rb, base, sizeof rb);
    struct bt_store a, b;
    bt_store_init(&a, NR, 60);
    bt_store_init(&b, NR, 60);
    bt_store_track_arrival(&a);
    bt_store_track_arrival(&b);
    feed(&a);
    feed(&b);

    /* forward in steps, one backward (a rebuild), forward again */
    static const int64_t at[] = {50, 100, 150, 200, 250, 300, 400, 450, 500, 600, 250, 300, 700};
    static const size_t applied[] = {0, 1, 1, 2, 2, 3, 5, 5, 7, 7, 2, 3, 7}; /* events t <= at */
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        bt_store_set_horizon(&a, ra, base, at[i]);
        bt_store_set_horizon(&b, rb, base, 0); /* everything, then back: a rebuild */
        bt_store_set_horizon(&b, rb, base, at[i]);
        OK(same(&a, ra, &b, rb), "horizon %lld: a seek from %lld is the rebuilt model",
           (long long)at[i], i ? (long long)at[i - 1] : 0LL);
        OK(a.hz_next == applied[i], "horizon %lld: %zu events applied (%zu)", (long long)at[i],
           applied[i], a.hz_next);
    }
    /* hand-worked: at 450 route 0's quota is the 400 event's 2000, route 1's max_tokens
     * 4096, CloudWatch failing on both routes since 200 (timed out) but route 1's OK at
     * 300 cleared its error */
    bt_store_set_horizon(&a, ra, base, 450);
    const struct bt_source_status *s0 = bt_store_status_c(&a, 0, BT_SRC_CLOUDWATCH);
    const struct bt_source_status *s1 = bt_store_status_c(&a, 1, BT_SRC_CLOUDWATCH);
    OK(ra[0].quota[BT_Q_TPM].value == 2000 && ra[1].max_tokens == 4096 && s0->last_error == 200 &&
           !strcmp(s0->error, "timed out") && s1->last_ok == 300 && s1->last_error == 0,
       "at 450: quota 2000, max_tokens 4096, route 0 failing since 200, route 1 ok at 300");

    /* a store change between seeks (a new event): the next seek rebuilds and sees it */
    bt_store_set_horizon(&a, ra, base, 600);
    quota_ev(&a, 550, 0, 3000);
    bt_store_set_horizon(&a, ra, base, 650);
    OK(ra[0].quota[BT_Q_TPM].value == 3000, "an event added after the last seek is applied (%g)",
       ra[0].quota[BT_Q_TPM].value);

    /* a log out of time order: applying in log order matters, so every seek rebuilds
     * (600 then 100 on route 0: at 700 the log's order leaves the 100 event's value) */
    struct bt_route rc[NR];
    memcpy(rc, base, sizeof rc);
    struct bt_store c;
    bt_store_init(&c, NR, 60);
    bt_store_track_arrival(&c);
    quota_ev(&c, 600, 0, 6000);
    quota_ev(&c, 100, 0, 1000);
    bt_store_set_horizon(&c, rc, base, 200);
    OK(rc[0].quota[BT_Q_TPM].value == 1000, "unordered log, at 200: the 100 event only");
    bt_store_set_horizon(&c, rc, base, 700);
    OK(rc[0].quota[BT_Q_TPM].value == 1000,
       "unordered log, at 700: both in log order, the last applied is the 100 event's (%g)",
       rc[0].quota[BT_Q_TPM].value);
    bt_store_free(&a);
    bt_store_free(&b);
    bt_store_free(&c);
    return tap_done();
}
