/* Keys: the key table's actions, the filter and prompt lines, replay controls. */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>

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
    if (next != cur && h->set_interval)
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
    k = k < 0 ? 0 : k >= n ? n - 1 : k;
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

static void act(struct bt_tui *t, enum bt_action a)
{
    if (act_replay(t, a))
        return;
    struct bt_tui_host *h = t->host;
    int page = LINES > 6 ? LINES - 6 : 1;
    switch (a) {
    case BT_ACT_QUIT: t->quit = true; break;
    case BT_ACT_BACK:
        if (t->help)
            t->help = false;
        else if (t->view == BT_VIEW_DETAIL)
            t->view = BT_VIEW_OVERVIEW;
        else
            t->filter[0] = '\0';
        break;
    case BT_ACT_HELP: t->help = !t->help; break;
    case BT_ACT_UP: tui_move_sel(t, -1); break;
    case BT_ACT_DOWN: tui_move_sel(t, 1); break;
    case BT_ACT_PGUP: tui_move_sel(t, -page); break;
    case BT_ACT_PGDN: tui_move_sel(t, page); break;
    case BT_ACT_HOME: tui_move_sel(t, -t->nvis); break;
    case BT_ACT_END: tui_move_sel(t, t->nvis); break;
    case BT_ACT_OPEN:
        if (t->sel_route >= 0)
            t->view = BT_VIEW_DETAIL;
        break;
    case BT_ACT_PREV_ROUTE: tui_move_sel(t, -1); break;
    case BT_ACT_NEXT_ROUTE: tui_move_sel(t, 1); break;
    case BT_ACT_SORT_NEXT:
        t->sort = (enum sort_key)((t->sort + 1) % SORT_COUNT);
        snprintf(t->msg, sizeof t->msg, "sort by %s", tui_sort_info[t->sort].name);
        break;
    case BT_ACT_SORT_PREV:
        t->sort = (enum sort_key)((t->sort + SORT_COUNT - 1) % SORT_COUNT);
        snprintf(t->msg, sizeof t->msg, "sort by %s", tui_sort_info[t->sort].name);
        break;
    case BT_ACT_SORT_REVERSE:
        t->sort_rev = !t->sort_rev;
        snprintf(t->msg, sizeof t->msg, "sort by %s%s", tui_sort_info[t->sort].name,
                 t->sort_rev ? " (inverted)" : "");
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
        t->nthemes = bt_theme_list(t->themes, MAX_THEMES);
        if (t->nthemes > 0) {
            int cur = 0;
            for (int i = 0; i < t->nthemes; i++)
                if (!strcmp(t->themes[i], t->theme.name))
                    cur = i;
            t->theme_idx = (cur + 1) % t->nthemes;
            t->msg[0] = '\0';
            tui_load_theme(t, t->themes[t->theme_idx]);
            tui_apply_theme(t);
            if (!t->msg[0])
                snprintf(t->msg, sizeof t->msg, "theme %s", t->theme.name);
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
    default: break;
    }
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

/* Enter on the prompt: go to the time typed, or write the marker. */
static void prompt_done(struct bt_tui *t)
{
    struct bt_tui_host *h = t->host;
    int kind = t->prompt;
    t->prompt = PR_NONE;
    if (kind == PR_MARKER) {
        const char *note = t->input[0] ? t->input : "marker";
        h->add_marker(h->arg, note);
        snprintf(t->msg, sizeof t->msg, "marker added: %.60s", note);
        return;
    }
    struct bt_tui_replay *rp = h->replay;
    int64_t to;
    if (!t->input[0])
        return;
    if (!rp->parse_time(rp->arg, t->input, h->now, &to)) {
        snprintf(t->msg, sizeof t->msg, "'%.40s' is not a time (14:32, -30m, +5m, ISO)", t->input);
        return;
    }
    if (to < rp->start || to > rp->end)
        snprintf(t->msg, sizeof t->msg, "%.40s is outside the recording: at its %s", t->input,
                 to < rp->start ? "start" : "end");
    tui_replay_seek(t, to);
}

static void prompt_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->input);
    if (c == 27) {
        t->prompt = PR_NONE;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        prompt_done(t);
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            t->input[len - 1] = '\0';
    } else if (c >= 32 && c < 127 && len + 1 < sizeof t->input) {
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
    } else if (c == 27 || c == 'M' || c == 'm') {
        t->markers_open = false;
    } else if (c == 'q') {
        t->quit = true;
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
        if (t->prompt != PR_NONE) {
            prompt_key(t, c);
            continue;
        }
        if (t->markers_open && t->host->replay) {
            tui_markers_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        unsigned ctx = t->help ? BT_CTX_HELP
                       : t->view == BT_VIEW_DETAIL ? BT_CTX_DETAIL : BT_CTX_OVERVIEW;
        if (t->host->replay)
            ctx <<= 3; /* the replay's contexts sit three bits up (tui/keys.h) */
        act(t, bt_key_action(c, ctx));
        if (t->quit)
            break;
    }
}
