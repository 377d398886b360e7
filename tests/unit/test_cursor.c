/* A replay cursor (core/recording.h, issue 33: core never seeks a caller's replay)
 * shows at every instant what the replay itself shows when sought there, and never
 * moves the replay it walks.
 *
 * A recording is made through the real recorder from a live store: two routes of one
 * model and Region (one quota group), per-minute samples that arrive with their poll
 * and one minute backfilled late, coverage records (one of them late too), a quota
 * that Service Quotas raises at 10:02:30, a max_tokens learned at 10:03:20, a
 * CloudWatch error at 10:04:10 and its OK at 10:05:10, and per-team admission
 * readings (two teams, the shares' per-series store). Then, for every instant of the
 * recording 10 s apart, forward, backward and in a shuffled order, with two cursors
 * at once: the whole report (text and JSON, every route's figures, warnings, quotas,
 * shares and coverage) from the cursor equals the one from the replay sought to the
 * same instant, every minute's coverage agrees, and the cursors leave the replay's
 * generation (it bumps on every seek), horizon and routes as they were. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/recording.h"
#include "core/util.h"
#include "io/conffile.h"
#include "io/recfile.h"
#include "render/report.h"
#include "tests/tap.h"

#define T0 1795946400LL /* 2026-11-29T10:00:00Z */
#define MODEL "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
#define MINUTES 8

static void sample(struct bt_store *s, int r, enum bt_signal sig, int64_t minute, double v,
                   int64_t arrival)
{
    struct bt_sample x = {.t = minute, .route = r, .signal = sig, .value = v};
    bt_store_add(s, &x, arrival);
}

static void cover(struct bt_store *s, int r, int64_t from, int64_t to, int64_t arrival)
{
    struct bt_coverage c = {.route = r,
                            .signals = BT_SIG_BIT(BT_SIG_INVOCATIONS) |
                                       BT_SIG_BIT(BT_SIG_INPUT_TOKENS) |
                                       BT_SIG_BIT(BT_SIG_OUTPUT_TOKENS) |
                                       BT_SIG_BIT(BT_SIG_THROTTLES),
                            .from = from, .to = to, .settled_to = to, .asked = arrival - 1};
    bt_store_cover(s, &c, arrival);
}

static void team(struct bt_store *s, int r, const char *name, enum bt_signal sig, double v,
                 int64_t t)
{
    struct bt_reading rd = {.route = r, .signal = sig, .t = (double)t, .value = v};
    snprintf(rd.series, sizeof rd.series, "team=\"%s\",worker=\"w%d\"", name, r);
    bt_store_reading(s, &rd, t);
}

static void event(struct bt_store *s, struct bt_event e)
{
    bt_store_event(s, &e);
}

/* The recording, written to path; false (and a failed test) if it could not be. */
static bool make_recording(const char *path)
{
    struct bt_config c;
    bt_config_init(&c);
    const char *names[] = {"chat", "batch"};
    for (int i = 0; i < 2; i++) {
        int k = bt_config_add_route(&c, names[i]);
        bt_strlcpy(c.routes[k].model, MODEL, sizeof c.routes[k].model);
        bt_strlcpy(c.routes[k].region, "us-east-1", sizeof c.routes[k].region);
        c.routes[k].max_tokens = 1000;
        /* the default's, which Service Quotas' answer outranks */
        c.routes[k].quota[BT_Q_TPM] = (struct bt_quota){.value = 200000, .source = BT_QS_DEFAULT};
    }
    bt_config_finish(&c);
    struct bt_store s;
    bt_store_init(&s, 2, 60);
    bt_store_bind_routes(&s, c.routes);
    char err[256];
    struct bt_recorder *rec = bt_recorder_open(path, &c, "live", T0, err, sizeof err);
    OK(rec != NULL, "recorder opens: %s", rec ? "" : err);
    if (!rec) {
        bt_store_free(&s);
        bt_config_free(&c);
        return false;
    }
    bt_recorder_attach(rec, &s);
    for (int i = 1; i <= MINUTES; i++) {
        int64_t poll = T0 + 60 * i + 20, m = T0 + 60 * (i - 1);
        for (int r = 0; r < 2; r++) {
            if (!(r == 1 && i == 3)) { /* batch's 10:02 comes late, at 10:06:40 */
                sample(&s, r, BT_SIG_INVOCATIONS, m, 10 * i + r, poll);
                sample(&s, r, BT_SIG_INPUT_TOKENS, m, 20000.0 * i + 1000 * r, poll);
                sample(&s, r, BT_SIG_OUTPUT_TOKENS, m, 3000.0 * i, poll);
                sample(&s, r, BT_SIG_THROTTLES, m, i == 5 ? 4 : 0, poll);
                cover(&s, r, m, m + 60, poll);
            }
            team(&s, r, r ? "search" : "support", BT_SIG_ADM_SETTLED, 50000.0 * i, poll);
            team(&s, r, r ? "search" : "support", BT_SIG_ADM_RESERVED_HELD, 7000.0 + 500 * i + r,
                 poll);
            sample(&s, r, BT_SIG_ADM_RESERVED_HELD, poll, 7000.0 + 500 * i + r, poll);
            event(&s, (struct bt_event){.t = poll, .type = BT_EV_OK, .route = r,
                                        .source = BT_SRC_ADMISSION});
        }
        if (i == 7) {
            sample(&s, 1, BT_SIG_INVOCATIONS, T0 + 120, 31, poll);
            sample(&s, 1, BT_SIG_INPUT_TOKENS, T0 + 120, 61000, poll);
            sample(&s, 1, BT_SIG_OUTPUT_TOKENS, T0 + 120, 9000, poll);
            sample(&s, 1, BT_SIG_THROTTLES, T0 + 120, 0, poll);
            cover(&s, 1, T0 + 120, T0 + 180, poll);
        }
        for (int r = 0; r < 2 && i == 2; r++) {
            struct bt_event q = {.t = T0 + 150, .type = BT_EV_QUOTA, .route = r,
                                 .source = BT_SRC_QUOTAS, .quota_kind = BT_Q_TPM, .value = 400000,
                                 .quota_source = BT_QS_SERVICE_QUOTAS};
            bt_strlcpy(q.code, "L-TEST0001", sizeof q.code);
            bt_strlcpy(q.text, "Cross-region model inference tokens per minute", sizeof q.text);
            event(&s, q);
        }
        if (i == 3)
            event(&s, (struct bt_event){.t = T0 + 200, .type = BT_EV_SETTING, .route = 1,
                                        .source = BT_SRC_ADMISSION,
                                        .setting = BT_SET_MAX_TOKENS, .value = 4000});
        struct bt_event cw = {.t = poll, .type = i == 4 ? BT_EV_ERROR : BT_EV_OK, .route = -1,
                              .source = BT_SRC_CLOUDWATCH};
        if (i == 4)
            bt_strlcpy(cw.text, "GetMetricData: timed out", sizeof cw.text);
        event(&s, cw);
        bt_recorder_flush(rec, poll);
    }
    bt_recorder_close(rec);
    bt_store_free(&s);
    bt_config_free(&c);
    return true;
}

/* The report of every route at t as text and JSON, from cfg and st. */
static char *report(const struct bt_config *cfg, const struct bt_store *st, int64_t t)
{
    struct bt_report rep;
    bt_report_build(&rep, cfg, st, t);
    struct bt_buf b = {0};
    bt_report_render(&rep, BT_FMT_TEXT, false, &b);
    bt_report_render(&rep, BT_FMT_JSON, false, &b);
    bt_report_free(&rep);
    char *s = bt_xstrdup(bt_buf_str(&b));
    bt_buf_free(&b);
    return s;
}

/* Every minute's coverage of every route and signal: the two stores agree. */
static bool same_coverage(const struct bt_store *a, const struct bt_store *b, int nr)
{
    for (int r = 0; r < nr; r++)
        for (int sig = 0; sig < BT_SIG_COUNT; sig++)
            for (int64_t m = T0 - 600; m <= T0 + 60 * (MINUTES + 2); m += 60)
                if (bt_store_covered(a, r, (enum bt_signal)sig, m) !=
                    bt_store_covered(b, r, (enum bt_signal)sig, m))
                    return false;
    return true;
}

int main(void)
{
    char dir[] = "/tmp/bt-cursor-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        OK(false, "mkdtemp");
        return tap_done();
    }
    snprintf(path, sizeof path, "%s/c.rec", dir);
    if (!make_recording(path))
        return tap_done();
    struct bt_replay rp;
    char err[512];
    OK(bt_replay_open(&rp, path, NULL, NULL, err, sizeof err), "the recording replays: %s", err);
    int nr = rp.cfg.nroutes;
    OK(nr == 2 && bt_store_cover_recorded(&rp.store, 1), "two routes, coverage recorded");
    /* the instants: every 10 s of the recording, forward, backward, then shuffled
     * (a fixed LCG: the same order every run) */
    int n = (int)((rp.end - rp.start) / 10) + 1, total = 3 * n;
    int64_t *at = calloc((size_t)total, sizeof *at);
    for (int i = 0; i < n; i++) {
        at[i] = rp.start + 10 * (int64_t)i;
        at[2 * n - 1 - i] = at[i];
        at[2 * n + i] = at[i];
    }
    uint32_t x = 12345;
    for (int i = n - 1; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (uint32_t)(i + 1));
        int64_t tmp = at[2 * n + i];
        at[2 * n + i] = at[2 * n + j];
        at[2 * n + j] = tmp;
    }
    struct bt_replay_cursor a, b;
    bt_replay_cursor_open(&a, &rp);
    bt_replay_cursor_open(&b, &rp);
    int differ = 0, cov_differ = 0, moved = 0, first_bad = -1;
    char *distinct[3] = {NULL, NULL, NULL}; /* the reports at 10:01:30, 10:03:30, 10:05:30 */
    for (int i = 0; i < total; i++) {
        int64_t t = at[i], u = at[total - 1 - i];
        uint64_t gen = bt_store_generation(&rp.store);
        int64_t hz = rp.store.horizon;
        double q = rp.cfg.routes[0].quota[BT_Q_TPM].value, mt = rp.cfg.routes[1].max_tokens;
        bt_replay_cursor_seek(&a, t);
        bt_replay_cursor_seek(&b, u); /* the other cursor elsewhere meanwhile */
        char *ca = report(&a.cfg, &a.store, t), *cb = report(&b.cfg, &b.store, u);
        moved += bt_store_generation(&rp.store) != gen || rp.store.horizon != hz ||
                 rp.cfg.routes[0].quota[BT_Q_TPM].value != q || rp.cfg.routes[1].max_tokens != mt;
        bt_replay_seek(&rp, u);
        char *rb = report(&rp.cfg, &rp.store, u);
        cov_differ += !same_coverage(&b.store, &rp.store, nr);
        bt_replay_seek(&rp, t);
        char *ra = report(&rp.cfg, &rp.store, t);
        cov_differ += !same_coverage(&a.store, &rp.store, nr);
        bool bad = strcmp(ca, ra) != 0 || strcmp(cb, rb) != 0;
        differ += bad;
        if (bad && first_bad < 0)
            first_bad = i;
        for (int k = 0; k < 3 && i < n; k++)
            if (t == T0 + 90 + 120 * k)
                distinct[k] = bt_xstrdup(ca);
        free(ca);
        free(cb);
        free(ra);
        free(rb);
    }
    OK(differ == 0, "%d instants (10 s apart; forward, backward, shuffled; two cursors): every "
       "report from a cursor is the replay's sought there (%d differ, the first at #%d)",
       total, differ, first_bad);
    OK(cov_differ == 0, "every minute's coverage agrees (%d instants differ)", cov_differ);
    OK(moved == 0, "no cursor seek moved the replay (its generation, horizon, quota, "
       "max_tokens; %d did)", moved);
    /* the comparison has something to tell apart: the quota (200,000 then 400,000), the
     * late minute and the failing poll make the reports of 10:01:30, 10:03:30 and
     * 10:05:30 differ from each other */
    OK(distinct[0] && distinct[1] && distinct[2] && strcmp(distinct[0], distinct[1]) &&
           strcmp(distinct[1], distinct[2]) && strstr(distinct[0], "200k") &&
           !strstr(distinct[0], "400k") && strstr(distinct[2], "400k"),
       "the reports differ over time (the quota 200k at 10:01:30, 400k at 10:05:30)");
    for (int k = 0; k < 3; k++)
        free(distinct[k]);
    /* closed, the cursors leave the replay whole: its report at the end is the same
     * before and after (ASan and valgrind check nothing of its was freed) */
    bt_replay_seek(&rp, rp.end);
    char *before = report(&rp.cfg, &rp.store, rp.end);
    bt_replay_cursor_close(&a);
    bt_replay_cursor_close(&b);
    bt_replay_seek(&rp, rp.start);
    bt_replay_seek(&rp, rp.end);
    char *after = report(&rp.cfg, &rp.store, rp.end);
    OK(!strcmp(before, after), "the replay after its cursors closed reports as before");
    free(before);
    free(after);
    free(at);
    bt_replay_free(&rp);
    if (!getenv("KEEP")) {
        unlink(path);
        rmdir(dir);
    }
    return tap_done();
}
