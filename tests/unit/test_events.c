/* The event log (core/events.h) and the one clock (core/dataminute.h), by hand:
 * evaluations written out for two routes, store events for a collector and a
 * marker, each entry's data minute worked out in the comments (lag 120 s). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/dataminute.h"
#include "core/events.h"
#include "io/conffile.h"
#include "io/recfile.h"
#include "tests/tap.h"

#define T0 1795946400 /* 2026-11-29 10:00:00 UTC */

static void warn(struct bt_eval *e, enum bt_wcode c, enum bt_status sev, const char *msg)
{
    e->warnings[e->nwarn].code = c;
    e->warnings[e->nwarn].severity = sev;
    snprintf(e->warnings[e->nwarn].message, sizeof e->warnings[0].message, "%s", msg);
    e->nwarn++;
}

static size_t count(const struct bt_evlog *l, enum bt_logkind k, int route)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->e[i].kind == k && l->e[i].route == route;
    return n;
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0; /* bit for bit: NAN is NAN */
}

/* What an export row and the event log read of one evaluation, compared. */
static bool same_eval(const struct bt_eval *a, const struct bt_eval *b)
{
    bool ok = a->now == b->now && a->status == b->status && a->nwarn == b->nwarn &&
              a->stale == b->stale && !strcmp(a->stale_reason, b->stale_reason) &&
              a->minute == b->minute && a->data_minute == b->data_minute &&
              a->adm_minute == b->adm_minute && a->state == b->state &&
              same_double(a->headroom_tpm, b->headroom_tpm) &&
              same_double(a->headroom_pct, b->headroom_pct) &&
              same_double(a->fits_more, b->fits_more) &&
              same_double(a->spend.usd_per_hour, b->spend.usd_per_hour) &&
              same_double(a->spend.usd_today, b->spend.usd_today) &&
              !strcmp(a->spend.reason, b->spend.reason);
    for (int w = 0; ok && w < a->nwarn; w++)
        ok = a->warnings[w].code == b->warnings[w].code &&
             a->warnings[w].severity == b->warnings[w].severity &&
             !strcmp(a->warnings[w].message, b->warnings[w].message);
    return ok;
}

/* A replay's steps: a data minute's instant may take its poll's evaluation (nothing
 * arrived between, the clock alone changes nothing); every step's evaluations (made
 * on the log's own cursor) are what a fresh bt_eval_all finds on the replay itself
 * sought to the step's instant. */
static void test_step_reuse(const char *path, bool some_reused)
{
    struct bt_replay rp;
    char err[512];
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        OK(false, "%s opens: %s", path, err);
        return;
    }
    int n = rp.cfg.nroutes;
    struct bt_eval *fresh = calloc((size_t)(n ? n : 1), sizeof *fresh);
    struct bt_evlog l;
    bt_evlog_init(&l, n);
    int64_t t, prev = 0;
    struct bt_eval *ev;
    int steps = 0, reused = 0, differ = 0;
    while (bt_evlog_replay_step_evals(&l, &rp, &t, &ev)) {
        bt_replay_seek(&rp, t);
        reused += prev && bt_replay_quiet(&rp, prev, t) &&
                  bt_eval_same_at(&rp.cfg, &rp.store, fresh, prev, t);
        bt_eval_all(&rp.cfg, &rp.store, t, fresh);
        for (int r = 0; r < n; r++)
            differ += !same_eval(&ev[r], &fresh[r]);
        prev = t;
        steps++;
    }
    OK(steps > 0 && differ == 0, "%s: %d steps, %d of them the poll's evaluation, every one "
       "as evaluated afresh (%d routes' evaluations differ)", path, steps, reused, differ);
    if (some_reused) /* the fixture's demo routes never sit still a minute */
        OK(reused > 0, "%s: a data minute's instant takes its poll's evaluation (%d)", path,
           reused);
    bt_evlog_free(&l);
    free(fresh);
    bt_replay_free(&rp);
}

int main(void)
{
    struct bt_config cfg;
    bt_config_init(&cfg);
    cfg.cw_lag = 120;
    cfg.nroutes = 2;

    /* the clock: at 10:16:00 the newest complete minute is floor(10:16 - 2 min) - 1 min
     * = 10:13; 10:13 is the newest from 10:13 + 1 min + 2 min = 10:16:00 to 10:16:59 */
    OK(bt_data_minute(&cfg, T0 + 16 * 60) == T0 + 13 * 60, "data minute at 10:16:00 is 10:13");
    OK(bt_data_minute(&cfg, T0 + 16 * 60 - 1) == T0 + 12 * 60, "... at 10:15:59 is 10:12");
    OK(bt_data_minute_shown(&cfg, T0 + 13 * 60) == T0 + 16 * 60 &&
           bt_data_minute_last(&cfg, T0 + 13 * 60) == T0 + 16 * 60 + 59,
       "10:13 is the newest from 10:16:00 to 10:16:59");

    struct bt_evlog l;
    bt_evlog_init(&l, 2);
    struct bt_eval ev[2];
    memset(ev, 0, sizeof ev);
    /* 10:10:00 (data 10:07): route 0 ok, route 1 warn with LOW_HEADROOM: the first
     * observation logs what is not ok, nothing for an ok route */
    ev[1].status = BT_ST_WARN;
    warn(&ev[1], BT_W_LOW_HEADROOM, BT_ST_WARN, "headroom 10%");
    bt_evlog_observe(&l, &cfg, ev, T0 + 10 * 60);
    OK(l.n == 2 && count(&l, BT_LOG_STATUS, 1) == 1 && count(&l, BT_LOG_RAISED, 1) == 1 &&
           count(&l, BT_LOG_STATUS, 0) == 0,
       "first look: route 1's warn and its warning, route 0 (ok) nothing (%zu)", l.n);
    OK(l.e[0].minute == T0 + 7 * 60 && l.e[0].at == T0 + 10 * 60, "stamped data minute 10:07");
    OK(!strcmp(l.e[0].text, "status warn"), "the first status reads 'status warn' (%s)", l.e[0].text);
    /* the same again: nothing new */
    bt_evlog_observe(&l, &cfg, ev, T0 + 10 * 60 + 15);
    OK(l.n == 2, "an unchanged evaluation logs nothing");
    /* 10:16:00 (data 10:13): route 0 crit with RETRY_LOAD; route 1 back to ok */
    struct bt_eval e2[2];
    memset(e2, 0, sizeof e2);
    e2[0].status = BT_ST_CRIT;
    warn(&e2[0], BT_W_RETRY_LOAD, BT_ST_CRIT, "retries are 52% of offered load");
    bt_evlog_observe(&l, &cfg, e2, T0 + 16 * 60);
    OK(count(&l, BT_LOG_STATUS, 0) == 1 && count(&l, BT_LOG_RAISED, 0) == 1 &&
           count(&l, BT_LOG_STATUS, 1) == 2 && count(&l, BT_LOG_CLEARED, 1) == 1,
       "route 0 turns crit (status, raised), route 1 recovers (status, cleared)");
    const struct bt_logent *crit = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (l.e[i].kind == BT_LOG_STATUS && l.e[i].route == 0)
            crit = &l.e[i];
    OK(crit && crit->from == BT_ST_OK && crit->to == BT_ST_CRIT && crit->minute == T0 + 13 * 60 &&
           !strcmp(crit->text, "status ok -> crit"),
       "route 0: 'status ok -> crit' at data minute 10:13");
    OK(bt_evlog_last_crit(&l, 0) == T0 + 13 * 60 && bt_evlog_last_crit(&l, 1) == 0,
       "route 0 was last crit at 10:13, route 1 never");
    /* 10:17:00: route 0 back to warn: the crit mark stays at 10:13 */
    e2[0].status = BT_ST_WARN;
    e2[0].warnings[0].severity = BT_ST_WARN;
    bt_evlog_observe(&l, &cfg, e2, T0 + 17 * 60);
    OK(bt_evlog_last_crit(&l, 0) == T0 + 13 * 60, "the last crit minute stays after it ends");
    OK(count(&l, BT_LOG_RAISED, 0) == 1, "a warning whose severity changed is not raised again");

    /* collector events: every failing poll is one event; the log takes the change only */
    struct bt_event fail = {.t = T0 + 18 * 60 + 30, .type = BT_EV_ERROR, .route = -1,
                            .source = BT_SRC_CLOUDWATCH};
    snprintf(fail.text, sizeof fail.text, "connection timed out");
    size_t before = l.n;
    bt_evlog_store_event(&l, &cfg, &fail);
    fail.t += 15;
    bt_evlog_store_event(&l, &cfg, &fail);
    OK(l.n == before + 1 && l.e[before].kind == BT_LOG_FAILED && l.e[before].route == -1 &&
           l.e[before].minute == T0 + 15 * 60,
       "a failing source: one entry, every route, data minute floor(10:18:30 - 2 min) - 1 = 10:15");
    struct bt_event okev = {.t = T0 + 20 * 60, .type = BT_EV_OK, .route = 1,
                            .source = BT_SRC_CLOUDWATCH};
    bt_evlog_store_event(&l, &cfg, &okev);
    OK(l.n == before + 2 && l.e[before + 1].kind == BT_LOG_RECOVERED && l.e[before + 1].route == 1,
       "one route answering again is its recovery");
    bt_evlog_store_event(&l, &cfg, &okev);
    OK(l.n == before + 2, "... once");
    struct bt_event mk = {.t = T0 + 20 * 60 + 30, .type = BT_EV_MARKER, .route = -1};
    snprintf(mk.text, sizeof mk.text, "deploy 42");
    bt_evlog_store_event(&l, &cfg, &mk);
    OK(l.e[l.n - 1].kind == BT_LOG_MARKER && !strcmp(l.e[l.n - 1].text, "marker: deploy 42") &&
           l.e[l.n - 1].minute == T0 + 17 * 60,
       "a marker at 10:20:30 is logged at data minute 10:17");
    /* a server's longest error: "Service Quotas failing: " (24 bytes) + the event's 223
     * is 247, which the entry's 360 holds whole (it held 240 and cut it: the reader lost
     * the end of the server's sentence); a cut, where one can happen, ends in "..."
     * (bt_fmt_cut, test_format) */
    struct bt_event sq = {.t = T0 + 21 * 60, .type = BT_EV_ERROR, .route = -1,
                          .source = BT_SRC_QUOTAS};
    memset(sq.text, 'x', sizeof sq.text - 1);
    sq.text[sizeof sq.text - 1] = '\0';
    bt_evlog_store_event(&l, &cfg, &sq);
    const char *cut = l.e[l.n - 1].text;
    OK(l.e[l.n - 1].kind == BT_LOG_FAILED && strlen(cut) == 24 + sizeof sq.text - 1 &&
           !strncmp(cut, "Service Quotas failing: xxx", 27) && !strstr(cut, "..."),
       "a server's longest error is kept whole (%zu bytes, ends %s)", strlen(cut), cut + 240);

    /* a recording's log (no limit) keeps every entry: past the live cap, nothing goes */
    size_t had = l.n;
    int64_t t1 = T0 + 30 * 60;
    for (int i = 0; i < BT_EVLOG_LIVE_MAX + 10; i++) {
        e2[1].status = i % 2 ? BT_ST_WARN : BT_ST_OK;
        bt_evlog_observe(&l, &cfg, e2, t1 + i);
    }
    /* e2[1] was ok (10:16), so i = 1 .. LIVE_MAX + 9 each change its status */
    OK(l.n == had + BT_EVLOG_LIVE_MAX + 9 && l.dropped == 0 && l.e[0].minute == T0 + 7 * 60 &&
           l.e[l.n - 1].at == t1 + BT_EVLOG_LIVE_MAX + 9,
       "a recording's log keeps every entry, the first one too (%zu kept, %zu dropped)", l.n,
       l.dropped);
    char note[200];
    bt_evlog_dropped_note(&l, note, sizeof note);
    OK(note[0] == '\0', "nothing dropped, no note");
    size_t lo, hi;
    bt_evlog_minute_range(&l, T0 + 13 * 60, T0 + 13 * 60, &lo, &hi);
    size_t want = 0, got = 0;
    for (size_t i = 0; i < l.n; i++)
        want += l.e[i].minute == T0 + 13 * 60;
    for (size_t i = lo; i < hi; i++)
        got += l.e[i].minute == T0 + 13 * 60;
    OK(!l.unordered && want > 0 && got == want && hi - lo == want,
       "a minute's entries found by binary search (%zu of %zu)", got, want);
    bt_evlog_free(&l);

    /* live (a limit): the oldest tenth goes when full, counted, and the note says so */
    bt_evlog_init(&l, 2);
    bt_evlog_set_limit(&l, 100);
    memset(e2, 0, sizeof e2);
    for (int i = 0; i < 105; i++) { /* a flip a minute: entry i at minute T0 + 60 i */
        e2[1].status = i % 2 ? BT_ST_WARN : BT_ST_OK;
        bt_evlog_observe(&l, &cfg, e2, T0 + 60 * (int64_t)i);
    }
    /* the first observation logs route 1 only if not ok: i = 0 is ok, so entries are the
     * flips i = 1..104 (104); at the 101st (i = 101) ten went (i = 1..10), leaving 94 */
    OK(l.n == 94 && l.dropped == 10 && l.dropped_through == bt_data_minute(&cfg, T0 + 600) &&
           l.e[l.n - 1].at == T0 + 60 * 104,
       "a live log keeps its newest (%zu kept, %zu dropped)", l.n, l.dropped);
    bt_evlog_dropped_note(&l, note, sizeof note);
    OK(strstr(note, "10 older events dropped") && strstr(note, "newest 100"),
       "the note says what went (%s)", note);
    bt_evlog_free(&l);
    bt_config_free(&cfg);
    test_step_reuse("tests/data/fixture.rec", false);
    test_step_reuse("tests/data/loadtest.rec", true);
    return tap_done();
}
