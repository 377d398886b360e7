/* The interactive replay: the TUI on the loop with no collectors; the clock
 * is recorded time, and every change of position is a store horizon. */
#include "app/replay_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/view.h"
#include "net/loop.h"
#include "core/dataminute.h"
#include "core/events.h"
#include "core/figures.h"
#include "core/headroom.h"
#include "core/util.h"
#include "tui/tui.h"
#include "io/file.h"

#define THROTTLE_BIT (1u << 31)
#define SCAN_SLICE 0.015 /* seconds of scanning per update: keys stay responsive */

struct rview {
    struct bt_replay *rp;
    struct bt_ctx ctx;
    struct bt_loop loop;
    struct bt_tui_host host;
    struct bt_tui_replay ctl;
    struct bt_tui_marker *markers;
    char note[96], problem[160];
    int nr;
    /* The scan for n/N and the timeline, filled lazily and in the background:
     * per poll, per route, the warning codes shown (bit per code) and whether
     * it was throttled (THROTTLE_BIT). */
    uint32_t *mask;
    unsigned char *evaluated;
    int64_t *ev_t;           /* per poll: 0 not known, -1 nothing started, else when it showed */
    uint32_t *newbits;       /* scratch: per route, what started */
    unsigned char *minutes;
    size_t scan_next;
    bool marks_dirty;        /* timeline marks changed since the screen last showed them */
    double marks_shown;      /* wall time of that */
    /* the scan's own place in the recording: it evaluates polls and instants there,
     * never moving the replay on screen (core/recording.h) */
    struct bt_replay_cursor scan;
    struct bt_evlog log;     /* the event log of the whole recording, built in the background
                              * on the log's own cursor */
    bool log_done;
};

static void show(struct rview *v, int64_t t)
{
    bt_replay_seek(v->rp, t);
}

static uint32_t eval_mask(const struct bt_eval *e)
{
    uint32_t m = bt_eval_warn_bits(e);
    if (bt_fig(e, BT_FIG_THROTTLES) > 0)
        m |= THROTTLE_BIT;
    return m;
}

static uint32_t *mask_at(struct rview *v, size_t i)
{
    return &v->mask[i * (size_t)v->nr];
}

static void evaluate_poll(struct rview *v, size_t i)
{
    if (v->evaluated[i])
        return;
    int64_t t = v->rp->polls[i];
    bt_replay_cursor_seek(&v->scan, t);
    uint32_t *m = mask_at(v, i);
    /* every route at once: routes on one quota are evaluated together */
    struct bt_eval *e = bt_xcalloc((size_t)(v->nr ? v->nr : 1), sizeof *e);
    bt_eval_all(&v->scan.cfg, &v->scan.store, t, e);
    for (int r = 0; r < v->nr; r++)
        m[r] = eval_mask(&e[r]);
    free(e);
    v->evaluated[i] = 1;
}

/* True when at poll i (i >= 1) a warning appears on a route that did not show
 * it at poll i-1, or a route starts being throttled. */
static bool event_at(struct rview *v, size_t i)
{
    if (i == 0 || i >= v->rp->npolls)
        return false;
    evaluate_poll(v, i - 1);
    evaluate_poll(v, i);
    const uint32_t *a = mask_at(v, i - 1), *b = mask_at(v, i);
    bool ev = false;
    for (int r = 0; r < v->nr && !ev; r++)
        ev = (b[r] & ~a[r]) != 0;
    return ev;
}

static void mark_minute(struct rview *v, int64_t t, unsigned char want)
{
    int64_t k = (t - v->ctl.minute0) / 60;
    if (k >= 0 && (size_t)k < v->ctl.nminutes && v->minutes[k] < want) {
        v->minutes[k] = want;
        v->marks_dirty = true;
    }
}

static bool visible(struct rview *v, const uint32_t *newbits, int64_t t)
{
    bt_replay_cursor_seek(&v->scan, t);
    struct bt_eval *e = bt_xcalloc((size_t)(v->nr ? v->nr : 1), sizeof *e);
    bt_eval_all(&v->scan.cfg, &v->scan.store, t, e);
    bool seen = false;
    for (int r = 0; r < v->nr && !seen; r++)
        seen = newbits[r] && (eval_mask(&e[r]) & newbits[r]);
    free(e);
    return seen;
}

/* The first second at which what appeared at poll i shows: samples carry their
 * arrival, so this is when the data said so, not when the poll happened to run. */
static void new_bits(struct rview *v, size_t i, uint32_t *newbits)
{
    const uint32_t *a = mask_at(v, i - 1), *b = mask_at(v, i);
    for (int r = 0; r < v->nr; r++)
        newbits[r] = b[r] & ~a[r];
}

static int64_t refine(struct rview *v, size_t i, uint32_t *newbits)
{
    new_bits(v, i, newbits);
    int64_t lo = v->rp->polls[i - 1], hi = v->rp->polls[i];
    /* live recordings: data arrives with its poll, one look settles it */
    if (hi - lo > 1 && !visible(v, newbits, hi - 1))
        return hi;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (visible(v, newbits, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* When something started between poll i-1 and poll i (-1: nothing); cached,
 * and marked on the timeline at that minute. */
static int64_t poll_event(struct rview *v, size_t i)
{
    if (i == 0 || i >= v->rp->npolls)
        return -1;
    if (v->ev_t[i])
        return v->ev_t[i];
    if (event_at(v, i)) {
        v->ev_t[i] = refine(v, i, v->newbits);
        mark_minute(v, v->ev_t[i], 2);
    } else {
        v->ev_t[i] = -1;
    }
    /* minutes without a poll of their own (a late loop) are scanned too */
    for (int64_t m = bt_minute_floor(v->rp->polls[i - 1]); m <= v->rp->polls[i]; m += 60)
        mark_minute(v, m, 1);
    return v->ev_t[i];
}

static void describe(struct rview *v, const uint32_t *newbits, int64_t t, char *what, size_t n)
{
    char hm[16], seen[16];
    bt_fmt_hhmm(bt_data_minute(&v->rp->cfg, t), hm, sizeof hm);
    bt_fmt_hhmm(t, seen, sizeof seen);
    int first = -1, routes = 0;
    for (int r = 0; r < v->nr; r++)
        if (newbits[r]) {
            routes++;
            if (first < 0)
                first = r;
        }
    struct bt_buf b = {0};
    bt_buf_printf(&b, "data %s %s:", hm, v->rp->cfg.routes[first].name);
    for (int w = 0; w < BT_W_COUNT; w++)
        if (newbits[first] & (1u << w))
            bt_buf_printf(&b, " %s", bt_wcode_name((enum bt_wcode)w));
    if (newbits[first] & THROTTLE_BIT)
        bt_buf_puts(&b, " throttled");
    if (routes > 1)
        bt_buf_printf(&b, " (+%d route%s)", routes - 1, routes > 2 ? "s" : "");
    bt_buf_printf(&b, " (seen %s:%02d)", seen, (int)(t % 60));
    bt_strlcpy(what, bt_buf_str(&b), n);
    bt_buf_free(&b);
}

static int64_t rv_find(void *arg, int64_t from, int dir, char *what, size_t n)
{
    struct rview *v = arg;
    const struct bt_replay *rp = v->rp;
    int64_t found = 0;
    size_t at = 0;
    if (dir > 0) {
        /* what started by a poll up to from already showed at from */
        size_t i = 1;
        while (i < rp->npolls && rp->polls[i] <= from)
            i++;
        for (; i < rp->npolls && !found; i++) {
            int64_t t = poll_event(v, i);
            if (t > from) {
                found = t;
                at = i;
            }
        }
    } else {
        size_t i = rp->npolls;
        while (i > 1 && rp->polls[i - 2] >= from)
            i--;
        for (; i > 1 && !found; i--) {
            int64_t t = poll_event(v, i - 1);
            if (t > 0 && t < from) {
                found = t;
                at = i - 1;
            }
        }
    }
    if (found) {
        new_bits(v, at, v->newbits);
        describe(v, v->newbits, found, what, n);
    }
    show(v, v->host.now);
    return found;
}

static void rv_seek(void *arg, int64_t t)
{
    struct rview *v = arg;
    v->host.now = t;
    show(v, t);
    bt_clock_jump(&v->loop.clock, (double)t);
}

static void rv_set_playing(void *arg, bool on)
{
    struct rview *v = arg;
    if (on && v->host.now >= v->rp->end)
        rv_seek(v, v->rp->start);
    v->ctl.playing = on;
    v->host.paused = !on;
    bt_clock_jump(&v->loop.clock, (double)v->host.now);
    bt_clock_freeze(&v->loop.clock, !on);
}

static void rv_set_speed(void *arg, double s)
{
    struct rview *v = arg;
    v->ctl.speed = s;
    bt_clock_set_speed(&v->loop.clock, s);
}

/* `g`: the same meaning as --at on the command line (+D from the start, -D before
 * the end), not relative to the position, so a time noted down finds the same moment. */
static bool rv_parse_time(void *arg, const char *s, int64_t rel, int64_t *out)
{
    struct rview *v = arg;
    (void)rel;
    return bt_replay_when_minute(v->rp, s, out);
}

/* Some of the background scan, then the store back where the screen is. */
static void scan_slice(struct rview *v)
{
    double t0 = bt_wall_now();
    while (v->scan_next < v->rp->npolls) {
        if (v->scan_next == 0)
            mark_minute(v, v->rp->polls[0], 1);
        else
            poll_event(v, v->scan_next);
        v->scan_next++;
        if (bt_wall_now() - t0 > SCAN_SLICE)
            return;
    }
    /* then the event log, as export derives it (core/events.c) */
    size_t before = v->log.n;
    while (!v->log_done && bt_wall_now() - t0 <= SCAN_SLICE) {
        v->log_done = !bt_evlog_replay_step(&v->log, v->rp, &v->host.evlog_upto);
    }
    if (v->log.n != before || v->log_done)
        v->marks_dirty = true;
}

static void rv_before_update(void *arg, int64_t now)
{
    struct rview *v = arg;
    (void)now; /* the loop's clock is read here, clamped to the recording */
    if (v->scan_next < v->rp->npolls || !v->log_done)
        scan_slice(v);
    /* a redraw of 200 routes costs more than a slice: show scan progress 4 times a second */
    double wall = bt_wall_now();
    if (v->marks_dirty && (v->scan_next >= v->rp->npolls || wall - v->marks_shown > 0.25)) {
        v->ctl.version++;
        v->marks_dirty = false;
        v->marks_shown = wall;
    }
    if (v->ctl.playing) {
        int64_t t = bt_clock_now(&v->loop.clock);
        if (t < v->rp->start)
            t = v->rp->start;
        if (t >= v->rp->end) {
            t = v->rp->end;
            v->host.now = t;
            rv_set_playing(v, false);
        }
        if (t != v->host.now) {
            v->host.now = t;
            show(v, t);
        }
    }
}

static int rv_wakeup(void *arg)
{
    struct rview *v = arg;
    return v->scan_next < v->rp->npolls || !v->log_done ? 0 : -1;
}

/* "FILE:LINE: why" -> LINE, 0 when not in that form. */
static int problem_line(const struct bt_replay *rp)
{
    size_t n = strlen(rp->path);
    if (strncmp(rp->first_problem, rp->path, n) != 0 || rp->first_problem[n] != ':')
        return 0;
    return atoi(rp->first_problem + n + 1);
}

int replay_view_run(struct app_opts *o, struct bt_replay *rp)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        bt_err("replay needs a terminal; for a report use: bedtop replay %s --at TIME",
               o->file);
        return 3;
    }
    static struct rview v;
    memset(&v, 0, sizeof v);
    v.rp = rp;
    v.nr = rp->cfg.nroutes;
    size_t cells = rp->npolls * (size_t)(v.nr ? v.nr : 1);
    v.mask = bt_xcalloc(cells, sizeof *v.mask);
    v.evaluated = bt_xcalloc(rp->npolls, 1);
    v.ev_t = bt_xcalloc(rp->npolls, sizeof *v.ev_t);
    v.newbits = bt_xcalloc((size_t)v.nr + 1, sizeof *v.newbits);
    v.ctx = (struct bt_ctx){.cfg = &rp->cfg, .store = &rp->store, .mode = BT_MODE_LIVE};
    v.loop = (struct bt_loop){.http = v.ctx.http};
    bt_clock_start(&v.loop.clock, (double)rp->start, 1);
    bt_clock_freeze(&v.loop.clock, true);
    v.markers = bt_xcalloc(rp->nmarkers + 1, sizeof *v.markers);
    for (size_t i = 0; i < rp->nmarkers; i++)
        v.markers[i] = (struct bt_tui_marker){rp->markers[i].t, rp->markers[i].text};
    if (!rp->has_admission)
        snprintf(v.note, sizeof v.note, "%s", !strcmp(rp->mode, "backfill")
                                                  ? "backfilled: no admission counters"
                                                  : "no admission counters");
    if (rp->skipped) {
        int line = problem_line(rp);
        snprintf(v.problem, sizeof v.problem, "%lu damaged line%s skipped", rp->skipped,
                 rp->skipped == 1 ? "" : "s");
        if (line > 0) {
            size_t len = strlen(v.problem);
            snprintf(v.problem + len, sizeof v.problem - len, " (line %d)", line);
        }
    }
    int64_t minute0 = bt_minute_floor(rp->start);
    size_t nminutes = (size_t)((rp->end - minute0) / 60 + 1);
    v.minutes = bt_xcalloc(nminutes, 1);
    v.ctl = (struct bt_tui_replay){
        .start = rp->start, .end = rp->end, .polls = rp->polls, .npolls = rp->npolls,
        .markers = v.markers, .nmarkers = rp->nmarkers, .speed = 1, .playing = false,
        .note = v.note[0] ? v.note : NULL, .problem = v.problem[0] ? v.problem : NULL,
        .minutes = v.minutes, .nminutes = nminutes, .minute0 = minute0, .arg = &v,
        .seek = rv_seek, .set_speed = rv_set_speed, .set_playing = rv_set_playing,
        .find = rv_find, .parse_time = rv_parse_time};
    /* opens at the start, paused: the first screen is the same every time */
    v.host = (struct bt_tui_host){.cfg = &rp->cfg, .store = &rp->store, .mode = "REPLAY",
                                  .now = rp->start, .interval = rp->cfg.interval,
                                  .paused = true, .metrics_per_poll = NAN,
                                  .metrics_per_day = NAN, .arg = &v, .replay = &v.ctl};
    bt_replay_cursor_open(&v.scan, rp);
    bt_evlog_init(&v.log, v.nr);
    v.host.evlog = &v.log;
    v.host.evlog_upto = rp->start;
    show(&v, rp->start);
    struct app_view view = {.host = &v.host, .loop = &v.loop, .before_update = rv_before_update,
                            .wakeup_ms = rv_wakeup, .arg = &v};
    int rc = app_view_run(&view, o);
    free(v.mask);
    free(v.evaluated);
    free(v.ev_t);
    free(v.newbits);
    free(v.minutes);
    free(v.markers);
    bt_evlog_free(&v.log);
    bt_replay_cursor_close(&v.scan);
    return rc;
}
