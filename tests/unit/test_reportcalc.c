/* The figures of bedtop report (core/reportcalc.c, core/incidentcalc.c), worked by hand. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ceiling.h"
#include "core/reportcalc.h"
#include "core/sanitize.h"
#include "core/shares.h"
#include "render/reportdoc.h"
#include "io/conffile.h"
#include "io/recfile.h"
#include "tests/tap.h"

#define T0 1795946400 /* 2026-11-29T10:00:00Z */

static void stats(void)
{
    double a[] = {3, 1, 2};
    NEAR(bt_stat_median(a, 3), 2, 0, "median of 3 1 2 is 2");
    double b[] = {4, 1, 3, 2};
    NEAR(bt_stat_median(b, 4), 2.5, 0, "median of four values: mean of the middle two, 2.5");
    double c[] = {NAN, 5, NAN};
    NEAR(bt_stat_median(c, 3), 5, 0, "unknown values are skipped, not read as 0");
    OK(isnan(bt_stat_median(c, 0)), "no value: the median is unknown");
    /* nearest rank: p99 of 1..100 is the 99th value (ceil(0.99 x 100) = 99), of
     * 1..200 the 198th (ceil(0.99 x 200) = 198), of five values the fifth
     * (ceil(4.95) = 5) */
    double h[200];
    for (int i = 0; i < 100; i++)
        h[i] = 100 - i;
    NEAR(bt_stat_percentile(h, 100, 99), 99, 0, "p99 of 1..100 is 99");
    NEAR(bt_stat_percentile(h, 100, 100), 100, 0, "p100 is the max");
    NEAR(bt_stat_percentile(h, 100, 50), 50, 0, "p50 of 1..100 is 50 (nearest rank)");
    for (int i = 0; i < 200; i++)
        h[i] = i + 1;
    NEAR(bt_stat_percentile(h, 200, 99), 198, 0, "p99 of 1..200 is 198");
    double f[] = {10, 50, 20, 40, 30};
    NEAR(bt_stat_percentile(f, 5, 99), 50, 0, "p99 of five values is the largest");
    /* round up to two significant figures */
    NEAR(bt_round_up_2sig(624000), 630000, 0, "624,000 asks for 630,000");
    NEAR(bt_round_up_2sig(620000), 620000, 0, "620,000 stays 620,000 (already round)");
    NEAR(bt_round_up_2sig(1040000), 1100000, 0, "1,040,000 asks for 1,100,000");
    NEAR(bt_round_up_2sig(264), 270, 0, "264 requests/min asks for 270");
    NEAR(bt_round_up_2sig(7), 7, 0, "7 stays 7");
    NEAR(bt_round_up_2sig(12.2), 13, 0, "12.2 rounds up to whole 13");
}

static bool open_fixture(struct bt_replay *rp)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/tests/data/quota-request.rec", tap_srcdir());
    if (!bt_replay_open(rp, path, NULL, NULL, err, sizeof err)) {
        OK(false, "fixture opens: %s", err);
        return false;
    }
    return true;
}

/* tests/data/quota-request.rec, written by hand: minutes 10:00..10:05 (data
 * minutes: recorded 10:03 to 10:08 with the 120 s lag), no admission counters.
 *   chat and chat-batch share quota L-TEST0001 (1,000,000 TPM, RPM 500 L-TEST0002),
 *   burndown 5; quota tokens = input + cache write + output x 5, or
 *   EstimatedTPMQuotaUsage where higher:
 *     min  chat: inv in      cr     cw     out    thr        batch: inv in     out   thr
 *     0         100 100,000 20,000 0      20,000 0                  10  40,000 2,000 0
 *     1         120 130,000 0      10,000 24,000 0                  -
 *     2         200 250,000 -      -      40,000 30                 20  50,000 4,000 5
 *     3         -  (idle)                                           -
 *     4         80  90,000  (estimated 200,000)  16,000 0           10  30,000 2,000 0
 *     5         150 160,000 -      -      30,000 12                 -
 *   chat quota tokens: 200,000; 260,000; 450,000; -; max(170,000, 200,000) = 200,000; 310,000
 *   batch:             50,000;  -;       70,000;  -; 40,000; -
 *   group per busy minute: 250,000 260,000 520,000 240,000 310,000
 *     sorted 240k 250k 260k 310k 520k: steady (median) 260,000, p99 (rank 5) and max 520,000
 *   RPM, requests accepted (Invocations: the RPM quota's measure, issue 32):
 *     110, 120, 220, 90, 150 -> sorted 90 110 120 150 220: steady 120, peak 220;
 *     offered (accepted + throttled) 110, 120, 255, 90, 162: peak 255, beside it
 *   average input: (120,000 + 140,000 + 250,000 + 90,000 + 160,000 + 40,000 + 50,000
 *     + 30,000) / (100 + 120 + 200 + 80 + 150 + 10 + 20 + 10) = 880,000 / 690 = 1,275.36
 *   average output: (130,000 + 8,000) / 690 = 200
 *   max_tokens: chat 2,000, chat-batch 4,000 -> 4,000
 *   throttled minutes 2 (10:02 and 10:05), 47 requests; observed ceiling: the most
 *     accepted in a throttled minute, max(520,000, 310,000) = 520,000
 *   ask: 520,000 x 1.2 = 624,000 -> 630,000 < 1,000,000: no increase needed;
 *     with margin 2.0: 1,040,000 -> 1,100,000 > 1,000,000: increase needed
 *   RPM ask 220 x 1.2 = 264 -> 270 < 500
 *   no latency recorded and no admission gauge: held reservations cannot be known, so
 *     `used` counts the charged figure in every busy minute (5 minutes held unknown)
 *   agents (mantle, input 20,000,000 / output 4,000,000 from config):
 *     inv in out: 10 100,000 5,000; 12 150,000 6,000; 8 80,000 4,000; 20 400,000 10,000;
 *     -; 10 120,000 5,000
 *     input sorted 80k 100k 120k 150k 400k: steady 120,000, max 400,000 -> ask 480,000
 *     output sorted 4k 5k 5k 6k 10k: steady 5,000, max 10,000 -> ask 12,000
 *     average input 850,000 / 60 = 14,166.7; output 30,000 / 60 = 500 */
static void quota_request(void)
{
    struct bt_replay rp;
    if (!open_fixture(&rp))
        return;
    bt_replay_seek(&rp, rp.end);
    struct bt_eval ev[3];
    bt_eval_all(&rp.cfg, &rp.store, rp.end, ev);
    int64_t from = bt_data_minute(&rp.cfg, rp.start), to = bt_data_minute(&rp.cfg, rp.end);
    NEAR((double)from, T0, 0, "the first data minute is 10:00");
    NEAR((double)to, T0 + 300, 0, "the last data minute is 10:05");
    struct bt_qr q;
    bt_qr_build(&rp.cfg, &rp.store, ev, from, to, NULL, 1.2, &q);
    OK(q.ngroups == 2, "two quota groups: chat + chat-batch, and agents (got %d)", q.ngroups);
    if (q.ngroups != 2)
        goto out;
    const struct bt_qr_group *g = &q.groups[0];
    OK(g->nroutes == 2 && g->routes[0] == 0 && g->routes[1] == 1, "chat and chat-batch are one group");
    OK(g->scope == BT_QR_CROSS_REGION && g->nsides == 1, "cross-Region scope, one TPM side");
    const struct bt_qr_side *sd = &g->side[0];
    STREQ(sd->code, "L-TEST0001", "quota code");
    NEAR(sd->quota, 1000000, 0, "current applied quota 1,000,000");
    NEAR(sd->tpm.steady, 260000, 0, "steady TPM: median of the busy minutes");
    NEAR(sd->tpm.p99, 520000, 0, "peak p99 TPM");
    NEAR(sd->tpm.max, 520000, 0, "peak max TPM");
    NEAR(g->rpm.steady, 120, 0, "steady RPM");
    NEAR(g->rpm.max, 220, 0, "peak RPM: accepted (Invocations), throttled requests not in it");
    NEAR(g->rpm_offered.max, 255, 0, "peak offered 255: accepted + throttled, beside it");
    OK(g->held_unknown_minutes == 5, "held unknown in the 5 busy minutes (got %d)", g->held_unknown_minutes);
    NEAR(sd->used.max, 520000, 0, "peak used: the charged figure where held is unknown");
    OK(g->verdict == BT_QR_NO_INCREASE, "verdict no-increase");
    NEAR(g->avg_input, 880000.0 / 690, 1e-9, "average input tokens per request 1,275.36");
    NEAR(g->avg_output, 200, 1e-9, "average output tokens per request 200");
    NEAR(g->max_tokens, 4000, 0, "max_tokens in use: the larger of the two routes");
    OK(g->throttled_minutes == 2, "two minutes throttled (got %d)", g->throttled_minutes);
    NEAR(g->throttled_requests, 47, 0, "47 requests throttled");
    NEAR(sd->ceiling, 520000, 0, "observed ceiling: most accepted in a throttled minute");
    OK(!sd->ceiling_points_to, "520,000 is 52%% of the quota: not far below it, nothing named");
    {
        /* one ceiling for every reader: core/ceiling.c's scan of the group gives the
         * request's figure, at 10:02 (the minute of 520,000), with 2 throttled minutes */
        struct bt_ceiling ce;
        int grp[] = {0, 1};
        bt_ceiling_scan(&rp.cfg, &rp.store, grp, 2, from, to, &ce);
        NEAR(ce.tokens, sd->ceiling, 0, "the request's ceiling is core/ceiling.c's");
        NEAR((double)ce.tokens_minute, T0 + 120, 0, "at 10:02");
        OK(ce.throttled_minutes == 2, "two throttled minutes scanned (got %d)", ce.throttled_minutes);
        /* accepted at 10:02: 220 (the RPM quota's measure); the most completed 220 */
        NEAR(ce.submitted_max, 220, 0, "most accepted in a throttled minute 220");
        NEAR(ce.requests, 220, 0, "most completed in a throttled minute 220");
    }
    NEAR(sd->ask, 630000, 0, "ask: 520,000 x 1.2 rounded up");
    OK(!sd->increase_needed, "630,000 fits 1,000,000: no increase needed");
    NEAR(sd->peak_pct, 52, 1e-9, "the peak is 52% of the quota");
    NEAR(g->rpm_quota, 500, 0, "RPM quota 500");
    NEAR(g->rpm_ask, 270, 0, "RPM ask 270");
    OK(g->busy_minutes == 5 && g->minutes == 6 && g->minutes_with_data == 5,
       "5 busy minutes of 6, the idle one without data");
    const struct bt_qr_group *m = &q.groups[1];
    OK(m->scope == BT_QR_MANTLE && m->nsides == 2, "agents: mantle, input and output sides");
    NEAR(m->side[0].tpm.steady, 120000, 0, "mantle input steady");
    NEAR(m->side[0].tpm.max, 400000, 0, "mantle input peak");
    NEAR(m->side[0].ask, 480000, 0, "mantle input ask");
    NEAR(m->side[1].tpm.steady, 5000, 0, "mantle output steady");
    NEAR(m->side[1].ask, 12000, 0, "mantle output ask");
    NEAR(m->avg_input, 850000.0 / 60, 1e-9, "mantle average input 14,166.7");
    OK(isnan(m->side[0].ceiling) && isnan(m->rpm.steady), "mantle: no throttle metric, no RPM");
    {
        /* the walk (the causes minute by minute, the covered minutes) evaluates the
         * throttled minutes on a cursor of its own: the caller's replay, at its end as
         * `report quota-request` leaves it, is not sought (its generation bumps on each
         * seek) and its routes keep the quotas of the end */
        uint64_t gen = bt_store_generation(&rp.store);
        double quota = rp.cfg.routes[0].quota[BT_Q_TPM].value;
        bt_qr_walk(&q, &rp);
        OK(bt_store_generation(&rp.store) == gen && rp.store.horizon == rp.end &&
               rp.cfg.routes[0].quota[BT_Q_TPM].value == quota,
           "the quota request's walk leaves the caller's replay untouched");
        /* six minutes 10:00..10:05, each asked by a good poll (the fixture's coverage) */
        OK(g->covered_minutes == 6, "chat's group: 6 minutes covered (got %d)", g->covered_minutes);
        /* throttled at 10:02 and 10:05, but no rule named THROTTLED_BELOW_ESTIMATE's
         * cause then (t_report_cases has the retry storm that does) */
        OK(!g->cause && g->cause_minutes == 0, "no cause named (got %d minutes)", g->cause_minutes);
    }
    bt_qr_free(&q);

    bt_qr_build(&rp.cfg, &rp.store, ev, from, to, NULL, 2.0, &q);
    NEAR(q.groups[0].side[0].ask, 1100000, 0, "margin 100%: 1,040,000 asks for 1,100,000");
    OK(q.groups[0].side[0].increase_needed, "1,100,000 is above the quota: an increase");
    bt_qr_free(&q);

    bool keep[3] = {false, true, false};
    bt_qr_build(&rp.cfg, &rp.store, ev, from, to, keep, 1.2, &q);
    /* --route chat-batch: a request is for the quota, so chat (the same group) stays in,
     * marked added (issue 34 item 5), with the whole group's figures: steady 260,000,
     * peak 520,000, never chat-batch's 50,000 / 70,000 alone */
    OK(q.ngroups == 1 && q.groups[0].nroutes == 2, "--route chat-batch: its whole group");
    OK(q.groups[0].nadded == 1 && q.groups[0].added[0] && !q.groups[0].added[1],
       "chat, not named, is marked added");
    NEAR(q.groups[0].side[0].tpm.steady, 260000, 0, "the group's steady 260,000");
    NEAR(q.groups[0].side[0].tpm.max, 520000, 0, "the group's peak 520,000");
    bt_qr_free(&q);
out:
    bt_replay_free(&rp);
}

/* tests/data/quota-request-tier.rec, written by hand: minutes 10:00..10:02, burndown 1
 * (quota tokens = input + output), no cache, no estimate, no admission counters.
 *   fast (L-TIER0001, 1,000,000 TPM, no RPM quota listed), every tier's counts and the
 *   reserved tier's (ResolvedServiceTier=reserved) apart:
 *     min  inv in      out    thr   reserved: inv in     out
 *     0    100 100,000 20,000 0               40  40,000 8,000
 *     1    200 200,000 40,000 10              50  50,000 10,000
 *     2    100  80,000 20,000 0               - (no tier series: every call on-demand)
 *   on-demand quota tokens, the reserved tier taken out (DOMAIN.md, service tiers):
 *     60,000 + 12,000 = 72,000; 150,000 + 30,000 = 180,000; 80,000 + 20,000 = 100,000
 *     sorted 72k 100k 180k: steady 100,000, peak 180,000 (not 120,000 and 240,000,
 *     every tier's); ceiling (throttled at 1) 180,000; ask 180,000 x 1.2 = 216,000 ->
 *     220,000, no increase; no RPM quota listed: no RPM ask (peak 200 accepted, 210
 *     offered)
 *     ceiling 180,000 is 18 % of the quota (under half): points to reservations
 *   reserved tier listed: 48,000 and 60,000 tokens in its 2 minutes: steady 54,000,
 *     peak 60,000; 90 requests
 *   old (legacy: ListMetrics lists LegacyModelInvocations; L-OLD00001, 300,000 TPM):
 *     25,000 and 35,000 (minute 2 idle): peak 35,000 x 1.2 = 42,000, the size a current
 *     model would need; nothing asked (AWS refuses increases for legacy models) */
static void quota_request_tier_legacy(void)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/tests/data/quota-request-tier.rec", tap_srcdir());
    struct bt_replay rp;
    if (!bt_replay_open(&rp, path, NULL, NULL, err, sizeof err)) {
        OK(false, "tier fixture opens: %s", err);
        return;
    }
    bt_replay_seek(&rp, rp.end);
    struct bt_eval ev[2];
    bt_eval_all(&rp.cfg, &rp.store, rp.end, ev);
    struct bt_qr q;
    bt_qr_build(&rp.cfg, &rp.store, ev, T0, T0 + 120, NULL, 1.2, &q);
    OK(q.ngroups == 2, "two quota groups (got %d)", q.ngroups);
    if (q.ngroups == 2) {
        const struct bt_qr_group *f = &q.groups[0], *o = &q.groups[1];
        NEAR(f->side[0].tpm.steady, 100000, 0, "fast: steady 100,000 on-demand (reserved tier out)");
        NEAR(f->side[0].tpm.max, 180000, 0, "fast: peak 180,000 on-demand");
        NEAR(f->side[0].ceiling, 180000, 0, "fast: ceiling 180,000, the reserved tier out");
        /* 18 % of the quota, no RPM quota, no server errors, no daily quota: held
         * reservations (core/ceiling.c's rule, as check and plan say it) */
        OK(f->side[0].ceiling_points_to && !strcmp(f->side[0].ceiling_points_to, "reservations"),
           "fast: the ceiling far below the quota points to reservations");
        NEAR(f->side[0].ask, 220000, 0, "fast: ask 220,000");
        OK(!f->side[0].increase_needed && !f->legacy, "fast: no increase needed, not legacy");
        OK(isnan(f->rpm_ask) && !f->rpm_increase_needed, "no RPM quota listed: no RPM ask");
        NEAR(f->rpm.max, 200, 0, "RPM peak 200 accepted (every tier's)");
        NEAR(f->rpm_offered.max, 210, 0, "RPM peak 210 offered");
        OK(f->tier_minutes == 2, "reserved tier seen in 2 minutes (got %d)", f->tier_minutes);
        NEAR(f->tier_tpm.steady, 54000, 0, "reserved tier steady 54,000");
        NEAR(f->tier_tpm.max, 60000, 0, "reserved tier peak 60,000");
        NEAR(f->tier_requests, 90, 0, "reserved tier 90 requests");
        OK(o->legacy && strstr(o->legacy_why, "LegacyModelInvocations"), "old: legacy, with the evidence");
        OK(isnan(o->side[0].ask) && !o->side[0].increase_needed, "old: nothing asked");
        NEAR(o->legacy_size, 42000, 0, "old: a current model would need 42,000");
        NEAR(o->side[0].tpm.max, 35000, 0, "old: peak 35,000 still shown");
        OK(o->tier_minutes == 0 && isnan(o->tier_tpm.steady), "old: no reserved tier");
    }
    bt_qr_free(&q);
    /* a quota whose name says legacy is legacy too */
    bt_strlcpy(rp.cfg.routes[0].quota[BT_Q_TPM].name, "On-demand tokens per minute for X (Legacy)",
               sizeof rp.cfg.routes[0].quota[BT_Q_TPM].name);
    bt_qr_build(&rp.cfg, &rp.store, ev, T0, T0 + 120, NULL, 1.2, &q);
    OK(q.ngroups == 2 && q.groups[0].legacy && strstr(q.groups[0].legacy_why, "name marks it legacy"),
       "a quota named (Legacy): legacy");
    bt_qr_free(&q);
    bt_replay_free(&rp);
}

/* The same fixture as an incident: chat throttled at 10:02 (30) and 10:05 (12),
 * chat-batch at 10:02 (5); the marker written at 10:06:30 is on screen with data
 * minute 10:03 (10:06:30 - 120 s lag = 10:04:30, whose newest complete minute is
 * 10:03). */
static void incident(void)
{
    struct bt_replay rp;
    if (!open_fixture(&rp))
        return;
    int64_t from = bt_data_minute(&rp.cfg, rp.start), to = bt_data_minute(&rp.cfg, rp.end);
    struct bt_incident inc;
    /* the caller's replay is never moved (issue 33): the walks seek cursors of their own
     * (bt_replay_cursor), so the store's generation (it bumps on every seek), horizon
     * and routes are as the caller left them; before, each walk sought the caller's
     * replay minute by minute and back (and before that, left it at rp.end) */
    int64_t mid = rp.start + (rp.end - rp.start) / 2;
    bt_replay_seek(&rp, mid);
    uint64_t gen = bt_store_generation(&rp.store);
    size_t rbytes = (size_t)rp.cfg.nroutes * sizeof *rp.cfg.routes;
    struct bt_route *was = malloc(rbytes);
    memcpy(was, rp.cfg.routes, rbytes);
    bt_incident_build(&rp, from, to, NULL, &inc);
    OK(bt_store_generation(&rp.store) == gen && rp.store.horizon == mid &&
           !memcmp(was, rp.cfg.routes, rbytes),
       "the incident leaves the caller's replay untouched (horizon %lld, was %lld)",
       (long long)rp.store.horizon, (long long)mid);
    struct bt_share_minutes smin;
    bt_share_minutes_build(&rp, 0, from, inc.n, &smin);
    OK(bt_store_generation(&rp.store) == gen && rp.store.horizon == mid &&
           !memcmp(was, rp.cfg.routes, rbytes),
       "... and so do its holders, minute by minute");
    bt_share_minutes_free(&smin);
    struct bt_evlog lg;
    bt_evlog_init(&lg, rp.cfg.nroutes);
    bt_evlog_from_replay(&lg, &rp);
    OK(bt_store_generation(&rp.store) == gen && rp.store.horizon == mid &&
           !memcmp(was, rp.cfg.routes, rbytes) && lg.n > 0,
       "... and so does the event log of the whole recording (%zu entries)", lg.n);
    bt_evlog_free(&lg);
    free(was);
    bt_replay_seek(&rp, rp.end);
    OK(inc.n == 6 && inc.nroutes == 3, "six data minutes, three routes");
    const struct bt_inc_route *chat = &inc.route[0];
    OK(chat->throttled_minutes == 2, "chat: two throttled minutes (got %d)", chat->throttled_minutes);
    NEAR(chat->throttles, 42, 0, "chat: 42 throttled requests");
    NEAR((double)chat->first_throttle, T0 + 120, 0, "chat: throttling from 10:02");
    NEAR((double)chat->last_throttle, T0 + 300, 0, "chat: last throttled at 10:05");
    OK(chat->affected && inc.route[1].affected, "chat and chat-batch are affected");
    OK(!inc.route[2].affected, "agents (not throttled, status unchanged) is not");
    NEAR((double)inc.route[1].recovered, T0 + 180, 0, "chat-batch recovered at 10:03");
    OK(chat->recovered == 0, "chat throttled in the last minute: not recovered in the window");
    OK(isnan(bt_inc_at(&inc, 2, 0)->throttles), "mantle: throttles unknown, not 0");
    OK(isnan(bt_inc_at(&inc, 2, 0)->offered) && bt_inc_at(&inc, 2, 0)->accepted == 10,
       "mantle: offered unknown (no throttle metric), accepted 10 calls");
    NEAR(bt_inc_at(&inc, 0, 3)->throttles, 0, 0, "chat at 10:03: idle after a good poll, 0");
    NEAR(bt_inc_at(&inc, 0, 2)->offered, 230, 0, "chat at 10:02: offered = 200 accepted + 30 throttled");
    OK(inc.nmarkers == 1 && inc.marker_minute[0] == T0 + 180, "the marker sits at data minute 10:03");
    int on = 0, off = 0, mk = 0;
    for (int i = 0; i < inc.ntl; i++) {
        const struct bt_tl_entry *t = &inc.tl[i];
        if (i > 0)
            OK(t->minute >= inc.tl[i - 1].minute, "timeline entry %d in time order", i);
        if (t->route == 0 && t->kind == BT_TL_THROTTLE_ON)
            on += t->minute == T0 + 120 || t->minute == T0 + 300;
        if (t->route == 0 && t->kind == BT_TL_THROTTLE_OFF)
            off += t->minute == T0 + 180;
        if (t->kind == BT_TL_MARKER)
            mk += t->minute == T0 + 180 && strstr(t->text, "canary") != NULL;
    }
    OK(on == 2, "chat: throttling starts at 10:02 and again at 10:05 (got %d)", on);
    OK(off == 1, "chat: throttling stops at 10:03");
    OK(mk == 1, "the marker is in the timeline at 10:03 with its note");
    /* the timeline is the event log's: every entry of the log in the window is in it */
    int logged = 0, taken = 0;
    for (size_t k = 0; k < inc.log->n; k++)
        logged += inc.log->e[k].minute >= from && inc.log->e[k].minute <= to;
    for (int i = 0; i < inc.ntl; i++)
        taken += inc.tl[i].ev != NULL;
    OK(logged > 0 && taken == logged, "the timeline holds the log's %d entries of the window (got %d)",
       logged, taken);
    /* a recording's log keeps every entry; a capped (live) log that dropped its
     * oldest says so above the table, not inside it */
    OK(inc.log->dropped == 0 && inc.log->max == 0, "a recording's event log drops nothing");
    if (inc.log->n) {
        inc.log->dropped = 2000;
        inc.log->max = 20000;
        inc.log->dropped_through = from + 60;
        struct bt_buf md = {0};
        bt_incident_render_md(&inc, &rp, false, &md);
        const char *s = bt_buf_str(&md), *note = strstr(s, "2000 older ones were dropped");
        const char *table = strstr(s, "| data minute | route | event |");
        OK(note && table && note < table, "dropped entries: a note before the timeline's table");
        bt_buf_free(&md);
        inc.log->dropped = 0;
        inc.log->max = 0;
        inc.log->dropped_through = 0;
    }
    bt_incident_free(&inc);
    bt_replay_free(&rp);
}

/* More affected routes than a chart has styles: the eight most affected, in
 * order, and nothing written past the caller's eight slots. Routes 1-11 are
 * affected at warn, route r throttled r minutes; 11 worsened to crit, 2 worsened
 * to warn, 5 was crit from the start. Order: worsened first (11 crit, then 2),
 * then the worst status (5), then throttled minutes (10 9 8 7 6). */
static void charted(void)
{
    struct bt_inc_route ro[12] = {0};
    struct bt_incident inc = {.nroutes = 12, .route = ro};
    for (int r = 0; r < 12; r++) {
        ro[r].affected = true;
        ro[r].worst = BT_ST_WARN;
        ro[r].throttled_minutes = r; /* later routes throttled longer */
    }
    ro[11].worsened = true;
    ro[11].worst = BT_ST_CRIT;
    ro[2].worsened = true;
    ro[5].worst = BT_ST_CRIT;
    ro[0].affected = false;
    int out[9];
    out[8] = -7;
    int n = bt_inc_charted(&inc, out, 8);
    OK(n == 8 && out[8] == -7, "eight routes charted of eleven affected, none written past them");
    /* worsened: 11 (crit), 2 (warn); then crit 5; then warn by throttled minutes 10 9 8 7 6 */
    static const int want[8] = {11, 2, 5, 10, 9, 8, 7, 6};
    bool same = true;
    for (int i = 0; i < 8; i++)
        same &= out[i] == want[i];
    OK(same, "most affected first: %d %d %d %d %d %d %d %d", out[0], out[1], out[2], out[3], out[4],
       out[5], out[6], out[7]);
}

/* The Markdown sink (core/sanitize.h) the reports write outside strings through. */
static void markdown(void)
{
    struct bt_buf b = {0};
    bt_san_md_buf(&b, "a|b <img src=x> [l](http://e) *x* `c` \\ &amp; ~s~ !");
    STREQ(bt_buf_str(&b), "a\\|b \\<img src=x\\> \\[l\\](http://e) \\*x\\* \\`c\\` \\\\ \\&amp; \\~s\\~ \\!",
          "every inline Markdown/HTML character escaped");
    bt_buf_reset(&b);
    bt_san_md_buf(&b, "line\n# heading\x1b[31m");
    STREQ(bt_buf_str(&b), "line?# heading?\\[31m", "no line break (nothing starts a line), no escape byte");
    bt_buf_reset(&b);
    bt_san_md_buf(&b, "d\xc3\xa9ploiement \xff");
    STREQ(bt_buf_str(&b), "d\xc3\xa9ploiement ?", "UTF-8 kept, invalid bytes replaced");
    bt_buf_free(&b);
}

/* One runtime route on a store built here, every minute polled (issue 31 case 4 and
 * issue 32's Adjustable). */
struct qfx {
    struct bt_config cfg;
    struct bt_store st;
};

static int qfx_route(struct qfx *f, const char *name, const char *model, double tpm,
                     double max_tokens)
{
    int r = bt_config_add_route(&f->cfg, name);
    struct bt_route *rt = &f->cfg.routes[r];
    bt_strlcpy(rt->model, model, sizeof rt->model);
    bt_strlcpy(rt->region, "us-east-1", sizeof rt->region);
    rt->max_tokens = max_tokens;
    rt->quota[BT_Q_TPM] = (struct bt_quota){tpm, BT_QS_SERVICE_QUOTAS, "L-QFX00001",
                                            "On-demand model inference tokens per minute for X"};
    return r;
}

static void qfx_put(struct qfx *f, int r, enum bt_signal s, int64_t t, double v, int64_t now)
{
    struct bt_sample smp = {.t = t, .route = r, .signal = s, .value = v};
    bt_store_add(&f->st, &smp, now);
}

static void qfx_start(struct qfx *f, int64_t now)
{
    bt_config_finish(&f->cfg);
    bt_store_init(&f->st, f->cfg.nroutes, 1440);
    for (int r = 0; r < f->cfg.nroutes; r++) {
        struct bt_event ev = {.t = now, .type = BT_EV_OK, .route = r, .source = BT_SRC_CLOUDWATCH};
        bt_model_event(&f->st, f->cfg.routes, &ev);
    }
}

/* Issue 31 case 4: `check` is crit at -85 % with 20 throttles a minute while the
 * quota request said "no increase needed" (it read charged tokens, without the held
 * reservations). Nova Lite (burndown 1), 1,000,000 TPM, max_tokens 4,500; every
 * minute 10:00 .. 10:05: 600 calls, input 300,000 (500 a call), output 60,000,
 * latency 29,800 ms, 20 throttles:
 *   charged = 300,000 + 60,000 = 360,000 a minute
 *   in flight = 600 / 60 x 29.8 = 298; R = 500 + 4,500 = 5,000; held 1,490,000
 *   used = 360,000 + 1,490,000 = 1,850,000: headroom -850,000 = -85 %, crit
 *   the charged peak alone: 360,000 x 1.2 = 432,000 -> 440,000, fits 1,000,000
 *   the used peak: 1,850,000 x 1.2 = 2,220,000 -> 2,300,000 > 1,000,000
 * so the verdict is lower-max-tokens-first (held reservations, not charged tokens,
 * exceed the quota), never "no increase needed"; the request's peak is the frame's
 * used, 185 % of the quota. */
static void quota_request_held(void)
{
    int64_t now = T0 + 600; /* 10:10: minutes to 10:07 settled */
    struct qfx f;
    bt_config_init(&f.cfg);
    int r = qfx_route(&f, "triage", "amazon.nova-lite-v1:0", 1000000, 4500);
    qfx_start(&f, now);
    for (int64_t m = T0; m <= T0 + 420; m += 60) {
        qfx_put(&f, r, BT_SIG_INVOCATIONS, m, 600, now);
        qfx_put(&f, r, BT_SIG_INPUT_TOKENS, m, 300000, now);
        qfx_put(&f, r, BT_SIG_OUTPUT_TOKENS, m, 60000, now);
        qfx_put(&f, r, BT_SIG_LATENCY_AVG, m, 29800, now);
        qfx_put(&f, r, BT_SIG_THROTTLES, m, 20, now);
    }
    struct bt_eval ev[1];
    bt_eval_all(&f.cfg, &f.st, now, ev);
    NEAR(ev[0].headroom_pct, -85, 1e-9, "check: -85 %%");
    OK(ev[0].status == BT_ST_CRIT, "check: crit");
    struct bt_qr q;
    bt_qr_build(&f.cfg, &f.st, ev, T0, T0 + 420, NULL, 1.2, &q);
    const struct bt_qr_side *sd = &q.groups[0].side[0];
    NEAR(sd->tpm.max, 360000, 0, "charged peak 360,000 (beside used)");
    NEAR(sd->used.max, 1850000, 1e-6, "used peak 1,850,000: the frame's, held reservations in");
    NEAR(sd->peak_pct, 185, 1e-6, "the peak is 185 %% of the quota, as check shows");
    NEAR(sd->ask, 2300000, 0, "ask from used: 2,300,000");
    NEAR(sd->charged_ask, 440000, 0, "the charged peak alone would ask 440,000");
    OK(sd->increase_needed && sd->held_only, "needed, and only with the held reservations");
    OK(q.groups[0].verdict == BT_QR_LOWER_MAX_TOKENS, "verdict lower-max-tokens-first (got %s)",
       bt_qr_verdict_name(q.groups[0].verdict));
    struct bt_buf out = {0};
    bt_qr_render(&q, &f.cfg, BT_DOC_TEXT, "test", now, &out);
    OK(!strstr(bt_buf_str(&out), "no increase needed") && strstr(bt_buf_str(&out), "lower max_tokens first"),
       "text: never \"no increase needed\"; lower max_tokens first");
    bt_buf_reset(&out);
    bt_qr_render(&q, &f.cfg, BT_DOC_JSON, "test", now, &out);
    cJSON *doc = cJSON_Parse(bt_buf_str(&out));
    const cJSON *gj = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "quota_groups"), 0);
    STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(gj, "verdict")), "lower-max-tokens-first",
          "json: verdict lower-max-tokens-first");
    cJSON_Delete(doc);
    bt_buf_free(&out);
    bt_qr_free(&q);
    /* the observed ceiling reads the same used beside the charged series */
    struct bt_ceiling ce;
    bt_ceiling_of(&f.cfg, &f.st, &ev[0], &ce);
    NEAR(ce.tokens, 360000, 0, "ceiling: charged 360,000 in a throttled minute");
    NEAR(ce.used, 1850000, 1e-6, "ceiling: used 1,850,000 beside it");
    OK(ce.points_to && !strcmp(ce.points_to, "reservations") && strstr(ce.why, "185%"),
       "ceiling points to reservations, with used at 185%% of the quota");

    /* a charged peak above the quota too: 2,000 calls of 500 input + 100 output at
     * 100 ms, 1,200,000 charged a minute: increase (the charged peak alone needs it) */
    struct qfx g;
    bt_config_init(&g.cfg);
    r = qfx_route(&g, "bulk", "amazon.nova-lite-v1:0", 1000000, 100);
    qfx_start(&g, now);
    for (int64_t m = T0; m <= T0 + 420; m += 60) {
        qfx_put(&g, r, BT_SIG_INVOCATIONS, m, 2000, now);
        qfx_put(&g, r, BT_SIG_INPUT_TOKENS, m, 1000000, now);
        qfx_put(&g, r, BT_SIG_OUTPUT_TOKENS, m, 200000, now);
        qfx_put(&g, r, BT_SIG_LATENCY_AVG, m, 100, now);
    }
    bt_eval_all(&g.cfg, &g.st, now, ev);
    bt_qr_build(&g.cfg, &g.st, ev, T0, T0 + 420, NULL, 1.2, &q);
    OK(q.groups[0].verdict == BT_QR_INCREASE && !q.groups[0].side[0].held_only, "verdict increase");
    bt_qr_free(&q);

    /* Adjustable: a quota Service Quotas marks not adjustable (Sonnet 5 on-demand's
     * 3,000,000) goes through AWS Support; an adjustable one through Service Quotas */
    g.cfg.routes[r].quota_adjustable[BT_Q_TPM] = BT_ADJ_NO;
    bt_qr_build(&g.cfg, &g.st, ev, T0, T0 + 420, NULL, 1.2, &q);
    OK(q.groups[0].side[0].through == BT_QR_AWS_SUPPORT, "not adjustable: aws-support");
    bt_qr_render(&q, &g.cfg, BT_DOC_JSON, "test", now, &out);
    doc = cJSON_Parse(bt_buf_str(&out));
    gj = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "quota_groups"), 0);
    const cJSON *qj = cJSON_GetArrayItem(cJSON_GetObjectItem(gj, "quotas"), 0);
    OK(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(gj, "request_through")), "aws-support") &&
           !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(qj, "request_through")), "aws-support") &&
           cJSON_IsFalse(cJSON_GetObjectItem(qj, "adjustable")),
       "json: request_through aws-support, adjustable false");
    cJSON_Delete(doc);
    bt_buf_reset(&out);
    bt_qr_render(&q, &g.cfg, BT_DOC_TEXT, "test", now, &out);
    OK(strstr(bt_buf_str(&out), "through AWS Support only") &&
           strstr(bt_buf_str(&out), "AWS may not raise it at all"),
       "text: through AWS Support only, may not be raised at all");
    bt_buf_free(&out);
    bt_qr_free(&q);
    g.cfg.routes[r].quota_adjustable[BT_Q_TPM] = BT_ADJ_YES;
    bt_qr_build(&g.cfg, &g.st, ev, T0, T0 + 420, NULL, 1.2, &q);
    OK(q.groups[0].side[0].through == BT_QR_SERVICE_QUOTAS, "adjustable: service-quotas");
    bt_qr_free(&q);
    bt_store_free(&g.st);
    bt_config_free(&g.cfg);
    bt_store_free(&f.st);
    bt_config_free(&f.cfg);
}

/* Coverage (issue 31): the quota request's observed ceiling says "none" only of the
 * minutes a poll asked. One route, window 10:00 .. 10:07 (8 minutes), every minute
 * 100 calls, 300,000 input, 55,000 output, no throttles; a poll asked 10:04 .. 10:07
 * only (settled): 4 of 8 covered, so "none: no covered minute was throttled (4 of 8
 * covered; the others unknown)"; a poll that asked only after the window: none
 * covered, "unknown: no minute of the window was covered by a poll". 1d9533e said
 * "none: no minute was throttled" of both. */
static void quota_request_ceiling_coverage(void)
{
    for (int pass = 0; pass < 2; pass++) {
        int64_t now = T0 + 900;
        struct qfx f;
        bt_config_init(&f.cfg);
        int r = qfx_route(&f, "flat", "amazon.nova-lite-v1:0", 1000000, 1000);
        qfx_start(&f, now);
        for (int64_t m = T0; m <= T0 + 420; m += 60) {
            qfx_put(&f, r, BT_SIG_INVOCATIONS, m, 100, now);
            qfx_put(&f, r, BT_SIG_INPUT_TOKENS, m, 300000, now);
            qfx_put(&f, r, BT_SIG_OUTPUT_TOKENS, m, 55000, now);
        }
        int64_t from = pass ? T0 + 480 : T0 + 240, to = pass ? T0 + 600 : T0 + 480;
        struct bt_coverage c = {.route = r, .from = from, .to = to, .settled_to = to, .asked = to + 180};
        c.signals = BT_SIG_BIT(BT_SIG_INVOCATIONS) | BT_SIG_BIT(BT_SIG_INPUT_TOKENS) |
                    BT_SIG_BIT(BT_SIG_OUTPUT_TOKENS) | BT_SIG_BIT(BT_SIG_THROTTLES);
        bt_store_cover(&f.st, &c, to + 180);
        struct bt_eval ev[1];
        bt_eval_all(&f.cfg, &f.st, now, ev);
        struct bt_qr q;
        bt_qr_build(&f.cfg, &f.st, ev, T0, T0 + 420, NULL, 1.2, &q);
        OK(q.ngroups == 1 && q.groups[0].covered_minutes == (pass ? 0 : 4) && q.groups[0].minutes == 8,
           "%d of 8 minutes covered (got %d of %d)", pass ? 0 : 4,
           q.ngroups ? q.groups[0].covered_minutes : -1, q.ngroups ? q.groups[0].minutes : -1);
        struct bt_buf out = {0};
        bt_qr_render(&q, &f.cfg, BT_DOC_TEXT, "test", now, &out);
        const char *want = pass ? "unknown: no minute of the window was covered by a poll"
                                : "none: no covered minute was throttled (4 of 8 covered; the others unknown)";
        OK(strstr(bt_buf_str(&out), want) != NULL, "the ceiling: %s", want);
        bt_buf_free(&out);
        bt_qr_free(&q);
        bt_store_free(&f.st);
        bt_config_free(&f.cfg);
    }
}

int main(void)
{
    markdown();
    charted();
    stats();
    quota_request();
    quota_request_tier_legacy();
    quota_request_held();
    quota_request_ceiling_coverage();
    incident();
    return tap_done();
}
