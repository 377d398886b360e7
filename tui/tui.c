/* The dashboard's lifecycle and its one draw: layout from the terminal size, then each view. */
#include "tui/tui.h"

#include <curses.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/dataminute.h"
#include "core/util.h"
#include "tui/keys.h"
#include "tui/view.h"

static bool g_curses_on;

static void draw(struct bt_tui *t)
{
    tui_evaluate(t);
    if (t->repaint) {
        /* after a resize the terminal's cells are unknown (it may have re-flowed
         * them): repaint every cell, as ^L does, instead of sending a difference */
        clearok(curscr, TRUE);
        t->repaint = false;
    }
    erase();
    int cols = COLS, rows = LINES;
    struct bt_layout_opts lo = {.view = t->view, .nroutes = t->nvis};
    enum gkind gk[BT_LAYOUT_MAX_GRAPHS];
    int help_w = cols - 2 < 76 ? cols - 2 : 76;
    int nhelp = t->help ? tui_help_build(t, help_w - 4) : 0;
    lo.help = t->help;
    lo.help_lines = nhelp;
    lo.timeline = t->host->replay != NULL;
    if (t->view == BT_VIEW_DETAIL && t->sel_route < 0)
        t->view = BT_VIEW_OVERVIEW;
    lo.view = t->view;
    int nw;
    /* The ESTIMATE ONLY banner takes its own line only while nothing is worse: in
     * a critical incident it is one line among the warnings (where it always is). */
    bool estimate_only = false, crit = false;
    if (t->view == BT_VIEW_DETAIL) {
        const struct bt_eval *e = &t->evals[t->sel_route];
        estimate_only = tui_estimate_only(e);
        crit = bt_eval_status(e) == BT_ST_CRIT;
        t->wkey.valid = false; /* the detail's lines replace the overview's */
        nw = tui_detail_warnings(t, t->sel_route, cols - 2, t->lines);
        lo.nfig_lines = tui_detail_figures(t, t->sel_route, cols - 2, t->fig_lines);
        lo.ngraphs = tui_detail_graphs(t, t->sel_route, gk);
    } else {
        for (int i = 0; i < t->nvis; i++) {
            const struct bt_eval *e = &t->evals[t->order[i]];
            estimate_only |= tui_estimate_only(e);
            crit |= bt_eval_status(e) == BT_ST_CRIT;
        }
        /* the rows the warnings pane gets: everything but the header, the banner, the
         * table, the action line, its own title, the status, timeline and key lines */
        int spare = rows - 1 - (estimate_only && !crit) - (t->nvis + 1) - 1 - 1 - 1 - 1 -
                    (t->host->replay ? 1 : 0);
        nw = tui_overview_warnings(t, t->lines, cols - 2, spare);
        lo.action = true;
        /* an expanded warning with the pane's focus is read whole: the table gives up
         * rows (it scrolls) rather than cut what to do */
        int k, end;
        if (t->wfocus && tui_expanded_lines(t, nw, &k, &end))
            lo.warn_min = end - k + 2;
    }
    lo.banner = estimate_only && !crit;
    lo.nwarn_lines = nw;
    struct bt_layout *l = &t->lay;
    bt_layout_compute(cols, rows, &lo, l);
    if (l->too_small)
        tui_draw_too_small(t, cols, rows);
    else if (t->view == BT_VIEW_DETAIL)
        tui_draw_detail(t, l, nw, gk);
    else
        tui_draw_overview(t, l, nw);
    if (!l->too_small) {
        tui_draw_timeline(t, l);
        tui_draw_fbar(t, l);
    }
    if (!l->too_small && t->markers_open && t->host->replay)
        tui_draw_markers(t, l);
    if (!l->too_small && t->plan && t->view == BT_VIEW_DETAIL)
        tui_plan_draw(t, l);
    if (!l->too_small && t->events_open)
        tui_draw_events(t, l);
    if (!l->too_small && t->ledger_open)
        tui_draw_ledger(t, l);
    if (!l->too_small && tui_holders_open() && !t->events_open)
        tui_draw_holders(t, l);
    if (!l->too_small && t->help)
        tui_draw_help(t, l, nhelp);
    wnoutrefresh(stdscr);
    doupdate();
}

/* ---------- lifecycle ---------- */

struct bt_tui *bt_tui_new(const struct bt_tui_opts *o, struct bt_tui_host *host, char *err,
                          size_t errlen)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(err, errlen, "the dashboard needs a terminal (try `bedtop check`)");
        return NULL;
    }
    struct bt_tui *t = bt_xcalloc(1, sizeof *t);
    t->host = host;
    t->sel_route = -1;
    t->wsel_route = t->wexp_route = -1;
    t->wsel_code = t->wexp_code = -1;
    t->gcursor = -1;
    t->bell = o->bell;
    const char *term = getenv("TERM");
    if (!term || !*term || !strcmp(term, "dumb")) {
        /* a dumb terminal cannot position the cursor: a screen of spaces helps nobody */
        snprintf(err, errlen, "TERM=%s cannot draw the dashboard; for plain output use `bedtop "
                 "check` (or set TERM, e.g. TERM=xterm-256color)", term && *term ? term : "(unset)");
        free(t);
        return NULL;
    }
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = !o->ascii && cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
    const char *nc = getenv("NO_COLOR");
    t->look.color_allowed = !o->no_color && !(nc && *nc);
    const char *theme = o->theme && *o->theme ? o->theme
                        : host->cfg->theme[0] ? host->cfg->theme : "default";
    tui_load_theme(t, theme);
    tui_draw_utf8(t->utf8);
    t->scr = newterm(NULL, stdout, stdin);
    if (!t->scr) {
                snprintf(err, errlen, "cannot initialise the terminal (TERM=%s)", term ? term : "unset");
        free(t);
        return NULL;
    }
    set_term(t->scr);
    t->active = true;
    g_curses_on = true;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    leaveok(stdscr, TRUE);
    /* the mouse as htop has it: click, double-click (timed here), wheel */
    mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    t->click_route = -1;
    t->look.cm = CM_MONO;
    if (t->look.color_allowed && has_colors()) {
        start_color();
        use_default_colors();
        if (COLORS >= 0x1000000)
            t->look.cm = CM_DIRECT;
        else if (COLORS >= 256)
            t->look.cm = CM_256;
        else if (COLORS >= 8)
            t->look.cm = CM_8;
        if (COLOR_PAIRS < BT_ROLE_COUNT + 1)
            t->look.cm = CM_MONO;
    }
    tui_apply_theme(t);
    return t;
}

/* What the screen would show now. */
static struct tui_shown to_show(const struct bt_tui *t)
{
    const struct bt_tui_host *h = t->host;
    return (struct tui_shown){.gen = bt_store_generation(h->store), .recfail = h->recording_failed,
                              .now = h->now, .next_poll = h->next_poll, .cols = COLS,
                              .rows = LINES, .paused = h->paused, .interval = h->interval,
                              .state = t->state,
                              .rversion = h->replay ? h->replay->version : 0};
}

static bool same(const struct tui_shown *a, const struct tui_shown *b)
{
    return a->gen == b->gen && a->recfail == b->recfail && a->now == b->now &&
           a->next_poll == b->next_poll && a->cols == b->cols && a->rows == b->rows &&
           a->paused == b->paused && a->interval == b->interval && a->state == b->state &&
           a->rversion == b->rversion;
}

/* Only the clock moved, inside the minute and the data minute on screen, on the
 * overview with nothing over it: no evaluation, order or layout can differ, only the
 * cells that read the clock to the second (tui_overview_tick). Elsewhere (the detail,
 * an overlay, replay's timeline) a tick draws the whole screen. */
static bool tick_only(const struct bt_tui *t, const struct tui_shown *was, const struct tui_shown *is)
{
    struct tui_shown moved = *is;
    moved.now = was->now;
    if (!same(was, &moved))
        return false;
    const struct bt_config *cfg = t->host->cfg;
    if (bt_minute_floor(was->now) != bt_minute_floor(is->now) ||
        bt_data_minute(cfg, was->now) != bt_data_minute(cfg, is->now))
        return false;
    return t->view == BT_VIEW_OVERVIEW && !t->lay.too_small && !t->help && !t->events_open &&
           !t->ledger_open && !tui_holders_open() && !t->markers_open && !t->plan &&
           t->prompt == PR_NONE && !t->filtering && !t->searching && !t->host->replay &&
           !t->repaint && t->evals && t->e_n == t->host->cfg->nroutes;
}

void bt_tui_update(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    struct tui_shown now = to_show(t);
    if (t->drawn && same(&t->shown, &now))
        return;
    if (t->drawn && tick_only(t, &t->shown, &now)) {
        tui_overview_tick(t, &t->lay);
        wnoutrefresh(stdscr);
        doupdate();
        t->shown = now;
        return;
    }
    draw(t);
    t->drawn = true;
    t->shown = now;
}

void bt_tui_resize(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
        resize_term(ws.ws_row, ws.ws_col);
    t->repaint = true;
    t->state++;
}

void bt_tui_redraw(struct bt_tui *t)
{
    if (t)
        t->state++;
}

bool bt_tui_quit(const struct bt_tui *t)
{
    return t && t->quit;
}

int bt_tui_next_wakeup_ms(const struct bt_tui *t)
{
    if (!t || !t->active)
        return -1;
    const struct bt_tui_replay *rp = t->host->replay;
    if (rp) {
        if (!rp->playing)
            return -1;
        /* one redraw per recorded second, at most ten a second at high speed */
        int ms = rp->speed > 0 ? (int)(1000 / rp->speed) : 1000;
        return ms < 100 ? 100 : ms;
    }
    if (t->host->paused)
        return -1;
    /* the status bar counts seconds: wake at the next wall-clock second */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return 1000 - (int)(ts.tv_nsec / 1000000);
}

void bt_tui_free(struct bt_tui *t)
{
    if (!t)
        return;
    if (t->active && g_curses_on) {
        endwin();
        g_curses_on = false;
    }
    if (t->scr)
        delscreen(t->scr);
    tui_plan_close(t);
    free(t->evals);
    bt_eval_groups_free(t->groups);
    free(t->order);
    tui_overview_free(t);
    bt_evlog_free(&t->own_log);
    free(t->crit_seen);
    free(t);
}

void bt_tui_emergency_restore(void)
{
    if (g_curses_on) {
        g_curses_on = false;
        endwin();
    }
}

