/* Keys: the key table's actions, the filter and prompt lines, replay controls. */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/dataminute.h"
#include "core/format.h"
#include "core/sanitize.h"
#include "core/util.h"
#include "tui/keys.h"

static const double intervals[] = {5, 10, 15, 30, 60, 120, 300, 600};

static void step_interval(struct bt_tui *t, int dir)
{
    struct bt_tui_host *h = t->host;
    double cur = h->interval, next = cur;
    int n = (int)BT_ARRAY_LEN(intervals);
    if (dir > 0) {
        for (int i = 0; i < n; i++)
            if (intervals[i] > cur) {
                next = intervals[i];
                break;
            }
    } else {
        for (int i = n - 1; i >= 0; i--)
            if (intervals[i] < cur) {
                next = intervals[i];
                break;
            }
    }
    if (next == cur) {
        snprintf(t->msg, sizeof t->msg, "interval %.0fs is already the %s", cur,
                 dir > 0 ? "longest" : "shortest");
        return;
    }
    if (h->set_interval)
        h->set_interval(h->arg, next);
    snprintf(t->msg, sizeof t->msg, "interval %.0fs", next);
}

static const double speeds[] = {1, 2, 5, 10, 30, 100, 300, 1000};

static void step_speed(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    int n = (int)BT_ARRAY_LEN(speeds), k = 0;
    for (int i = 0; i < n; i++)
        if (speeds[i] <= rp->speed)
            k = i;
    k += dir;
    if (k < 0 || k >= n) {
        snprintf(t->msg, sizeof t->msg, "speed %gx is already the %s", rp->speed,
                 dir > 0 ? "fastest" : "slowest");
        return;
    }
    rp->set_speed(rp->arg, speeds[k]);
    snprintf(t->msg, sizeof t->msg, "speed %gx", speeds[k]);
}

void tui_replay_seek(struct bt_tui *t, int64_t to)
{
    struct bt_tui_replay *rp = t->host->replay;
    if (to < rp->start)
        to = rp->start;
    if (to > rp->end)
        to = rp->end;
    rp->seek(rp->arg, to);
}

/* One poll forward or back from the current time; stepping pauses. */
static void step_poll(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    int64_t now = t->host->now, to = 0;
    if (rp->playing)
        rp->set_playing(rp->arg, false);
    if (dir > 0) {
        for (size_t i = 0; i < rp->npolls && !to; i++)
            if (rp->polls[i] > now)
                to = rp->polls[i];
    } else {
        for (size_t i = rp->npolls; i > 0 && !to; i--)
            if (rp->polls[i - 1] < now)
                to = rp->polls[i - 1];
    }
    if (!to) {
        snprintf(t->msg, sizeof t->msg, dir > 0 ? "at the last poll" : "at the first poll");
        return;
    }
    tui_replay_seek(t, to);
}

static void find_event(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    char what[120] = "";
    int64_t to = rp->find(rp->arg, t->host->now, dir, what, sizeof what);
    if (!to) {
        snprintf(t->msg, sizeof t->msg, "no %s warning or throttle", dir > 0 ? "later" : "earlier");
        return;
    }
    tui_replay_seek(t, to);
    snprintf(t->msg, sizeof t->msg, "%s", what);
}

/* Replay's own actions; false when a is not one. */
static bool act_replay(struct bt_tui *t, enum bt_action a)
{
    struct bt_tui_replay *rp = t->host->replay;
    if (!rp)
        return false;
    switch (a) {
    case BT_ACT_PLAY: rp->set_playing(rp->arg, !rp->playing); break;
    case BT_ACT_STEP_FWD: step_poll(t, 1); break;
    case BT_ACT_STEP_BACK: step_poll(t, -1); break;
    case BT_ACT_SPEED_UP: step_speed(t, 1); break;
    case BT_ACT_SPEED_DOWN: step_speed(t, -1); break;
    case BT_ACT_GOTO:
        t->prompt = PR_GOTO;
        t->input[0] = '\0';
        break;
    case BT_ACT_NEXT_EVENT: find_event(t, 1); break;
    case BT_ACT_PREV_EVENT: find_event(t, -1); break;
    case BT_ACT_REPLAY_START: tui_replay_seek(t, rp->start); break;
    case BT_ACT_REPLAY_END: tui_replay_seek(t, rp->end); break;
    case BT_ACT_MARKERS:
        if (!rp->nmarkers) {
            snprintf(t->msg, sizeof t->msg, "no markers in this recording (the live dashboard's "
                     "m adds them with --record)");
            break;
        }
        t->markers_open = true;
        /* the marker at or before the current time is the likely one wanted */
        t->marker_sel = 0;
        for (size_t i = 0; i < rp->nmarkers; i++)
            if (rp->markers[i].t <= t->host->now)
                t->marker_sel = (int)i;
        break;
    default: return false;
    }
    return true;
}

/* Up, Down, pages, Home and End move whatever has the focus: the help, the detail's
 * document, the warnings pane, else the route selection. */
static void move_focus(struct bt_tui *t, long delta, bool page)
{
    struct tui_scroll *sc = NULL;
    const char *what = "";
    if (t->help) {
        sc = &t->hsc, what = "help";
    } else if (t->view == BT_VIEW_DETAIL) {
        sc = &t->dsc, what = "detail";
    } else if (t->wfocus) {
        /* the cursor moves a warning at a time; a page is the pane's height */
        int pg = t->wsc.page > 1 ? t->wsc.page : 1;
        long d = page ? delta * pg : delta;
        tui_warning_move(t, d > 1 << 20 ? 1 << 20 : d < -(1 << 20) ? -(1 << 20) : (int)d);
        return;
    }
    int pg = sc ? (sc->page > 1 ? sc->page : 1) : (t->lay.table.h > 2 ? t->lay.table.h - 2 : 1);
    long d = page ? delta * pg : delta;
    if (d > 1 << 20)
        d = 1 << 20;
    if (d < -(1 << 20))
        d = -(1 << 20);
    if (sc)
        tui_scroll_pane(t, sc, (int)d, what);
    else
        tui_select_by(t, (int)d);
}

static void act(struct bt_tui *t, enum bt_action a)
{
    if (act_replay(t, a))
        return;
    struct bt_tui_host *h = t->host;
    switch (a) {
    case BT_ACT_QUIT: t->quit = true; break;
    case BT_ACT_BACK_OR_QUIT:
        if (t->help)
            t->help = false;
        else if (t->view == BT_VIEW_DETAIL)
            t->view = BT_VIEW_OVERVIEW;
        else
            t->quit = true;
        break;
    case BT_ACT_BACK:
        if (t->help)
            t->help = false;
        else if (t->view == BT_VIEW_DETAIL)
            t->view = BT_VIEW_OVERVIEW;
        else if (t->filter[0])
            t->filter[0] = '\0';
        else if (t->wfocus)
            t->wfocus = false;
        else
            snprintf(t->msg, sizeof t->msg, "nothing to go back from (q or F10 quits)");
        break;
    case BT_ACT_HELP:
        t->help = !t->help;
        t->hsc.pos = 0;
        break;
    case BT_ACT_UP: move_focus(t, -1, false); break;
    case BT_ACT_DOWN: move_focus(t, 1, false); break;
    case BT_ACT_PGUP: move_focus(t, -1, true); break;
    case BT_ACT_PGDN: move_focus(t, 1, true); break;
    case BT_ACT_HOME: move_focus(t, -(1L << 20), false); break;
    case BT_ACT_END: move_focus(t, 1L << 20, false); break;
    case BT_ACT_FOCUS:
        if (!t->wfocus && t->wsc.lines == 0) {
            snprintf(t->msg, sizeof t->msg, "no warnings to move to");
            break;
        }
        t->wfocus = !t->wfocus;
        if (t->wfocus && t->wsel_route < 0)
            tui_warning_move(t, 0); /* the cursor on the first (the worst) warning */
        snprintf(t->msg, sizeof t->msg, t->wfocus ? "warnings: Up/Down pick one, Enter expands "
                 "it (again: its route), Tab goes back" : "routes");
        break;
    case BT_ACT_OPEN:
        if (t->wfocus && t->view == BT_VIEW_OVERVIEW)
            tui_warning_enter(t); /* that warning's route, not the selected row's */
        else
            tui_open_detail(t);
        break;
    case BT_ACT_EVENTS:
        t->events_open = true;
        t->esc.pos = 0;
        break;
    case BT_ACT_LEDGER:
        t->ledger_open = true;
        t->lsc.pos = 0;
        break;
    case BT_ACT_SEARCH:
        t->searching = true;
        t->search[0] = '\0';
        break;
    case BT_ACT_ZOOM_IN:
    case BT_ACT_ZOOM_OUT:
    case BT_ACT_PAN_BACK:
    case BT_ACT_PAN_FWD:
    case BT_ACT_CURSOR_BACK:
    case BT_ACT_CURSOR_FWD: tui_graph_key(t, a); break;
    case BT_ACT_PREV_ROUTE:
    case BT_ACT_NEXT_ROUTE:
        tui_select_by(t, a == BT_ACT_NEXT_ROUTE ? 1 : -1);
        t->dsc.pos = 0;
        break;
    case BT_ACT_SORT_NEXT: /* a new sort starts in its own direction: I does not stick */
        t->sort = (enum sort_key)((t->sort + 1) % SORT_COUNT);
        t->sort_rev = false;
        tui_sort_msg(t);
        break;
    case BT_ACT_SORT_PREV:
        t->sort = (enum sort_key)((t->sort + SORT_COUNT - 1) % SORT_COUNT);
        t->sort_rev = false;
        tui_sort_msg(t);
        break;
    case BT_ACT_SORT_REVERSE:
        t->sort_rev = !t->sort_rev;
        tui_sort_msg(t);
        break;
    case BT_ACT_FILTER: t->filtering = true; break;
    case BT_ACT_PAUSE:
        if (h->set_paused)
            h->set_paused(h->arg, !h->paused);
        else
            h->paused = !h->paused;
        break;
    case BT_ACT_SLOWER: step_interval(t, 1); break;
    case BT_ACT_FASTER: step_interval(t, -1); break;
    case BT_ACT_THEME:
        t->look.nthemes = bt_theme_list(t->look.themes, MAX_THEMES);
        if (t->look.nthemes > 0) {
            int cur = 0;
            for (int i = 0; i < t->look.nthemes; i++)
                if (!strcmp(t->look.themes[i], t->look.theme.name))
                    cur = i;
            t->look.theme_idx = (cur + 1) % t->look.nthemes;
            t->msg[0] = '\0';
            tui_load_theme(t, t->look.themes[t->look.theme_idx]);
            tui_apply_theme(t);
            if (!t->msg[0])
                snprintf(t->msg, sizeof t->msg, "theme %s", t->look.theme.name);
        }
        break;
    case BT_ACT_REFRESH:
        if (h->refresh_now)
            h->refresh_now(h->arg);
        snprintf(t->msg, sizeof t->msg, "refreshing");
        break;
    case BT_ACT_MARKER:
        if (h->add_marker && h->recording) {
            t->prompt = PR_MARKER;
            t->input[0] = '\0';
        } else {
            snprintf(t->msg, sizeof t->msg, "markers need --record FILE");
        }
        break;
    case BT_ACT_REDRAW: clearok(curscr, TRUE); break;
    case BT_ACT_PLAN: tui_plan_open(t); break;
    case BT_ACT_HOLDERS: tui_holders_toggle(t); break;
    default: break;
    }
}

/* A key that does nothing where it was pressed says so. */
static void unbound(struct bt_tui *t, int c)
{
    char name[32];
    /* the names the help uses, never curses' (KEY_END) */
    static const struct {
        int key;
        const char *name;
    } names[] = {{KEY_HOME, "Home"}, {KEY_END, "End"}, {KEY_PPAGE, "PgUp"}, {KEY_NPAGE, "PgDn"},
                 {KEY_UP, "Up"}, {KEY_DOWN, "Down"}, {KEY_LEFT, "Left"}, {KEY_RIGHT, "Right"},
                 {KEY_IC, "Insert"}, {KEY_DC, "Delete"}, {KEY_BACKSPACE, "Backspace"},
                 {127, "Backspace"}, {KEY_BTAB, "S-Tab"}, {'\t', "Tab"}, {'\n', "Enter"},
                 {'\r', "Enter"}, {KEY_ENTER, "Enter"}, {' ', "Space"}, {27, "Esc"}};
    snprintf(name, sizeof name, "that key");
    for (size_t i = 0; i < BT_ARRAY_LEN(names); i++)
        if (names[i].key == c)
            snprintf(name, sizeof name, "%s", names[i].name);
    if (c >= 33 && c < 127)
        snprintf(name, sizeof name, "'%c'", c);
    else if (c >= KEY_F(1) && c <= KEY_F(63))
        snprintf(name, sizeof name, "F%d", c - KEY_F(0));
    else if (c > 0 && c < 32 && !strcmp(name, "that key"))
        snprintf(name, sizeof name, "^%c", c + 64);
    snprintf(t->msg, sizeof t->msg, "%s does nothing %s; ? lists the keys", name,
             t->help ? "in the help" : t->view == BT_VIEW_DETAIL ? "in the detail" : "here");
}

static unsigned context(const struct bt_tui *t)
{
    unsigned ctx = t->help ? BT_CTX_HELP
                   : t->view == BT_VIEW_DETAIL ? BT_CTX_DETAIL : BT_CTX_OVERVIEW;
    if (t->host->replay)
        ctx <<= 3; /* the replay's contexts sit three bits up (tui/keys.h) */
    return ctx;
}

/* A key where no overlay or prompt takes it: the key table's action, or why it does
 * nothing (also what a click on the F-key bar presses, through tui_mouse). */
static void key(struct bt_tui *t, int c)
{
    enum bt_action a = bt_key_action(c, context(t));
    if (a == BT_ACT_NONE)
        unbound(t, c);
    else
        act(t, a);
}

static void filter_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->filter);
    if (c == 27) {
        t->filter[0] = '\0';
        t->filtering = false;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        t->filtering = false;
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            t->filter[len - 1] = '\0';
    } else if (c >= 32 && c < 127 && len + 1 < sizeof t->filter) {
        t->filter[len] = (char)c;
        t->filter[len + 1] = '\0';
    }
}

/* The route to jump to for the search text: the first at or after the selection
 * (from the one after it with again) whose name, model or Region contains it. */
static void search_jump(struct bt_tui *t, bool next)
{
    if (!t->search[0] || !t->nvis)
        return;
    int pos = tui_sel_pos(t);
    for (int k = next ? 1 : 0; k <= t->nvis; k++) {
        int r = t->order[(pos + k) % t->nvis];
        const struct bt_route *rt = &t->host->cfg->routes[r];
        if (tui_contains(rt->name, t->search) || tui_contains(rt->model, t->search) ||
            tui_contains(rt->region, t->search)) {
            t->sel_route = r;
            return;
        }
    }
    snprintf(t->msg, sizeof t->msg, "no route matches '%.40s'", t->search);
}

/* F3: typing jumps to the first route matching; F3 or Down again to the next one;
 * Enter or Esc ends the search where it is (the list is never filtered). */
static void search_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->search);
    if (c == 27 || c == '\n' || c == '\r' || c == KEY_ENTER) {
        t->searching = false;
    } else if (c == KEY_F(3) || c == KEY_DOWN) {
        search_jump(t, true);
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            t->search[len - 1] = '\0';
        search_jump(t, false);
    } else if (c >= 32 && c < 127 && len + 1 < sizeof t->search) {
        t->search[len] = (char)c;
        t->search[len + 1] = '\0';
        search_jump(t, false);
    }
}

/* Enter on the prompt: go to the time typed, or write the marker. */
static void prompt_done(struct bt_tui *t)
{
    struct bt_tui_host *h = t->host;
    int kind = t->prompt;
    t->prompt = PR_NONE;
    if (kind == PR_MARKER) {
        char note[sizeof t->input];
        bt_san_term(note, sizeof note, t->input[0] ? t->input : "marker");
        /* named by the data minute it is filed under, the one the header shows */
        int64_t at = h->add_marker(h->arg, note);
        char dm[16] = "-";
        if (at)
            bt_fmt_hhmm(bt_data_minute(h->cfg, at), dm, sizeof dm);
        snprintf(t->msg, sizeof t->msg, "marker at data %s added: %s", dm, note);
        return;
    }
    struct bt_tui_replay *rp = h->replay;
    int64_t m;
    if (!t->input[0])
        return;
    if (!rp->parse_time(rp->arg, t->input, h->now, &m)) {
        snprintf(t->msg, sizeof t->msg, "'%.40s' is not a time (14:32, -30m, +5m, ISO)", t->input);
        return;
    }
    /* a data minute, shown as it stood while it was the newest complete one */
    int64_t first = bt_data_minute(h->cfg, rp->start), last = bt_data_minute(h->cfg, rp->end);
    if (m < first || m > last) {
        char a[16], b[16];
        bt_fmt_hhmm(first, a, sizeof a);
        bt_fmt_hhmm(last, b, sizeof b);
        snprintf(t->msg, sizeof t->msg, "%.40s is outside the recording (data %s to %s): at its %s",
                 t->input, a, b, m < first ? "start" : "end");
    }
    tui_replay_seek(t, bt_data_minute_last(h->cfg, m)); /* as replay --at shows it */
}

static void prompt_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->input);
    if (c == 27) {
        t->prompt = PR_NONE;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        prompt_done(t);
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        /* a whole character: its continuation bytes, then its lead byte */
        while (len && ((unsigned char)t->input[len - 1] & 0xC0) == 0x80)
            len--;
        if (len)
            len--;
        t->input[len] = '\0';
    } else if (c >= 32 && c < 256 && c != 127 && len + 1 < sizeof t->input) {
        /* bytes of 0x80 and up are UTF-8 arriving one byte a key (a note may say
         * "déploiement"); what is not valid UTF-8 is replaced when the note is kept */
        t->input[len] = (char)c;
        t->input[len + 1] = '\0';
    }
}

/* The markers overlay: move, Enter jumps to the selected marker, Esc closes. */
void tui_markers_key(struct bt_tui *t, int c)
{
    struct bt_tui_replay *rp = t->host->replay;
    int n = (int)rp->nmarkers;
    if (c == KEY_UP || c == 'k') {
        if (t->marker_sel > 0)
            t->marker_sel--;
    } else if (c == KEY_DOWN || c == 'j') {
        if (t->marker_sel + 1 < n)
            t->marker_sel++;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        t->markers_open = false;
        if (n) {
            const struct bt_tui_marker *m = &rp->markers[t->marker_sel];
            tui_replay_seek(t, m->t);
            snprintf(t->msg, sizeof t->msg, "marker: %.100s", m->text ? m->text : "");
        }
    } else if (c == 27 || c == 'M' || c == 'm' || c == 'q' || c == KEY_LEFT) {
        t->markers_open = false;
    } else if (c == 'Q' || c == KEY_F(10)) {
        t->quit = true;
    } else if (c != KEY_MOUSE) {
        snprintf(t->msg, sizeof t->msg, "markers: Up/Down choose, Enter jumps, Esc closes");
    }
}

void bt_tui_input(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    int c;
    for (int guard = 0; guard < 4096; guard++) {
        c = getch();
        if (c == ERR)
            break;
        t->state++;
        if (c == KEY_RESIZE) {
            t->repaint = true;
            continue;
        }
        if (t->msg[0])
            t->msg[0] = '\0';
        if (t->filtering) {
            filter_key(t, c);
            continue;
        }
        if (t->searching) {
            search_key(t, c);
            continue;
        }
        if (t->events_open && !t->help) {
            tui_events_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        if (t->ledger_open && !t->help) {
            tui_ledger_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        if (tui_holders_open() && !t->help && c != KEY_MOUSE && c != KEY_RESIZE) {
            tui_holders_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        if (t->prompt != PR_NONE) {
            prompt_key(t, c);
            continue;
        }
        if (t->plan && c != KEY_MOUSE) {
            tui_plan_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        if (t->markers_open && t->host->replay) {
            tui_markers_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        if (c == KEY_MOUSE)
            tui_mouse(t, key);
        else
            key(t, c);
        if (t->quit)
            break;
    }
}
