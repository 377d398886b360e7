/* The event log overlay (e, like k9s's events) and the marks it leaves: core derives
 * the log (core/events.h); live the dashboard feeds it what it evaluates, a replay
 * hands over the recording's. */
#include "tui/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/format.h"
#include "core/util.h"

const struct bt_evlog *tui_log(const struct bt_tui *t)
{
    return t->host->evlog ? t->host->evlog : &t->own_log;
}

/* Live: what the screen just evaluated goes into the dashboard's own log; the bell
 * rings once for each route that turned crit. */
void tui_feed_log(struct bt_tui *t)
{
    if (t->host->evlog)
        return;
    const struct bt_config *cfg = t->host->cfg;
    if (t->own_log.nroutes != cfg->nroutes) {
        bt_evlog_free(&t->own_log);
        bt_evlog_init(&t->own_log, cfg->nroutes);
        bt_evlog_set_limit(&t->own_log, BT_EVLOG_LIVE_MAX); /* live: unbounded in time */
    }
    size_t before = t->own_log.n;
    bt_evlog_store_events(&t->own_log, cfg, t->host->store);
    bt_evlog_observe(&t->own_log, cfg, t->evals, t->host->now);
    bool new_crit = false;
    for (size_t i = before; i < t->own_log.n; i++) {
        const struct bt_logent *x = &t->own_log.e[i];
        new_crit |= x->kind == BT_LOG_STATUS && x->to == BT_ST_CRIT && x->from != BT_ST_CRIT;
    }
    if (new_crit && t->bell)
        beep();
}

/* Replay: the last minute route r was crit at or before the position, from one pass
 * over the log per position (not one per row). */
static int64_t replay_last_crit(struct bt_tui *t, int r)
{
    const struct bt_evlog *l = t->host->evlog;
    int n = t->host->cfg->nroutes;
    if (!t->crit_seen || t->crit_n != n || t->crit_now != t->host->now ||
        t->crit_gen != l->generation) {
        free(t->crit_seen);
        t->crit_seen = bt_xcalloc((size_t)n + 1, sizeof *t->crit_seen);
        for (size_t i = 0; i < l->n && l->e[i].at <= t->host->now; i++) {
            const struct bt_logent *x = &l->e[i];
            if (x->kind == BT_LOG_STATUS && x->route >= 0 && x->route < n &&
                (x->to == BT_ST_CRIT || x->from == BT_ST_CRIT))
                t->crit_seen[x->route] = x->minute;
        }
        t->crit_n = n;
        t->crit_now = t->host->now;
        t->crit_gen = l->generation;
    }
    return r >= 0 && r < n ? t->crit_seen[r] : 0;
}

/* Crit within the last TUI_CRIT_MARK_MIN data minutes, and not crit now. */
bool tui_was_crit(struct bt_tui *t, int r)
{
    const struct bt_evlog *l = tui_log(t);
    int64_t last = bt_evlog_last_crit(l, r);
    if (!last || bt_eval_status(&t->evals[r]) == BT_ST_CRIT)
        return false;
    int64_t now = bt_data_minute(t->host->cfg, t->host->now);
    if (t->host->evlog) /* replay: the log covers the whole recording; up to here only */
        last = replay_last_crit(t, r);
    return last && now - last <= TUI_CRIT_MARK_MIN * 60;
}

/* In a route's detail the log is that route's: its own events and those of no route
 * (markers, a collector failing for all); -1 on the overview: every route's. */
static int events_route(const struct bt_tui *t)
{
    return t->view == BT_VIEW_DETAIL ? t->sel_route : -1;
}

/* Newest first, up to the position (replay) or now. */
static int build(struct bt_tui *t, int width)
{
    const struct bt_evlog *l = tui_log(t);
    const struct bt_config *cfg = t->host->cfg;
    int only = events_route(t);
    int n = 0;
    for (size_t i = l->n; i > 0 && n < MAX_WLINES; i--) {
        const struct bt_logent *x = &l->e[i - 1];
        if (t->host->evlog && x->at > t->host->now)
            continue;
        if (only >= 0 && x->route >= 0 && x->route != only)
            continue;
        char hm[16], line[sizeof t->ev_lines[0].s + 40]; /* the columns and the line whole */
        bt_fmt_hhmm(x->minute, hm, sizeof hm);
        const char *who = x->route >= 0 && x->route < cfg->nroutes ? cfg->routes[x->route].name
                          : x->kind == BT_LOG_MARKER                ? "-"
                                                                    : "all";
        char head[40];
        snprintf(head, sizeof head, "%s %-4s %-11.11s ", hm, tui_sev_label(x->severity), who);
        /* the text wrapped beside the time, severity and route columns */
        int before = n;
        tui_wrap(t->ev_lines, &n, x->text, width - 22, 0, BT_ROLE_HELP);
        for (int k = before; k < n; k++) {
            snprintf(line, sizeof line, "%-22s%s", k == before ? head : "", t->ev_lines[k].s);
            bt_strlcpy_cut(t->ev_lines[k].s, line, sizeof t->ev_lines[k].s);
            t->ev_lines[k].route = x->route;
            t->ev_lines[k].first = k == before;
            t->ev_lines[k].lead = k == before ? 11 : 0; /* time and severity */
            t->ev_lines[k].lead_role = tui_sev_role(x->severity);
        }
    }
    if (l->dropped && n < MAX_WLINES) { /* the oldest end says what the cap took */
        char note[200];
        bt_evlog_dropped_note(l, note, sizeof note);
        int before = n;
        tui_wrap(t->ev_lines, &n, note, width, 0, BT_ROLE_HELP);
        for (int k = before; k < n; k++) {
            t->ev_lines[k].route = -1;
            t->ev_lines[k].first = k == before;
            t->ev_lines[k].lead = 0;
        }
    }
    return n;
}

void tui_draw_events(struct bt_tui *t, const struct bt_layout *l)
{
    int w = l->cols - 2 < 110 ? l->cols - 2 : 110;
    int hh = l->rows - 2;
    struct bt_rect h = {(l->cols - w) / 2, 1, w, hh};
    if (h.w < 20 || h.h < 3)
        return;
    int n = build(t, w - 4);
    attr_t a = A(t, BT_ROLE_HELP);
    const struct bt_evlog *lg = tui_log(t);
    char title[128];
    char of[64] = "";
    if (events_route(t) >= 0) /* the route's own: the title says whose */
        snprintf(of, sizeof of, " of %.40s", t->host->cfg->routes[events_route(t)].name);
    if (t->host->evlog && t->host->evlog_upto < t->host->replay->end)
        snprintf(title, sizeof title, " events%s, newest first (scanning the recording...) Esc closes ", of);
    else if (of[0])
        snprintf(title, sizeof title, " events%s, newest first, data minutes; Esc closes ", of);
    else
        snprintf(title, sizeof title, " events, newest first, data minutes (%zu%s) Esc closes ",
                 lg->n, lg->dropped ? ", oldest dropped" : "");
    tui_box(t, h, title, a);
    struct bt_rect body = {h.x + 2, h.y + 1, h.w - 4, h.h - 2};
    if (!n) {
        tui_text(body.y, body.x, body.w, "nothing has happened yet: every status change, "
                 "warning raised or cleared, collector failure and marker lands here", a);
        t->esc.lines = 0;
        return;
    }
    tui_draw_lines(t, body, t->ev_lines, n, &t->esc);
    tui_box_scroll_tag(h, &t->esc, body.h, "PgDn/PgUp", a);
}

/* Keys while the log is open: scroll, Esc/e/q close, Q quits. */
void tui_events_key(struct bt_tui *t, int c)
{
    struct tui_scroll *sc = &t->esc;
    int page = sc->page > 1 ? sc->page : 1;
    if (c == KEY_UP || c == 'k')
        tui_scroll_pane(t, sc, -1, "event log");
    else if (c == KEY_DOWN || c == 'j')
        tui_scroll_pane(t, sc, 1, "event log");
    else if (c == KEY_PPAGE)
        tui_scroll_pane(t, sc, -page, "event log");
    else if (c == KEY_NPAGE || c == ' ')
        tui_scroll_pane(t, sc, page, "event log");
    else if (c == KEY_HOME)
        sc->pos = 0;
    else if (c == KEY_END)
        sc->pos = sc->max;
    else if (c == 27 || c == 'e' || c == 'q' || c == KEY_LEFT)
        t->events_open = false;
    else if (c == 'Q' || c == KEY_F(10))
        t->quit = true;
    else if (c != KEY_MOUSE)
        snprintf(t->msg, sizeof t->msg, "event log: Up/Down/PgUp/PgDn scroll, Esc closes");
}
