/* The mouse, as htop has it: a click selects a row, a double click opens it, a
 * click on a heading sorts, the wheel scrolls what is under the pointer, the
 * F-key bar is clickable. Events map onto the layout last drawn. */
#include "tui/view.h"

#include <stdio.h>
#include <time.h>

#include "tui/keys.h"

static bool in(struct bt_rect r, int x, int y)
{
    return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The wheel scrolls what is under the pointer. */
static void wheel(struct bt_tui *t, int y, int dir)
{
    const struct bt_layout *l = &t->lay;
    if (t->help)
        tui_scroll_pane(t, &t->hsc, 3 * dir, "help");
    else if (t->view == BT_VIEW_DETAIL)
        tui_scroll_pane(t, &t->dsc, 3 * dir, "detail");
    else if (in(l->warnings, 0, y))
        tui_scroll_pane(t, &t->wsc, 3 * dir, "warnings");
    else
        tui_select_by(t, dir);
}

/* A click on a column heading sorts by it (again: inverts). */
static void click_heading(struct bt_tui *t, int x)
{
    const struct bt_layout *l = &t->lay;
    for (int i = 0; i < l->ncols; i++) {
        enum bt_col c = l->col[i];
        if (x < l->col_x[c] || x >= l->col_x[c] + l->col_w[c])
            continue;
        for (int k = 0; k < SORT_COUNT; k++) {
            if (tui_sort_info[k].col != c)
                continue;
            if (t->sort == (enum sort_key)k)
                t->sort_rev = !t->sort_rev;
            else
                t->sort = (enum sort_key)k, t->sort_rev = false;
            tui_sort_msg(t);
            return;
        }
        snprintf(t->msg, sizeof t->msg, "%s does not sort; > and < cycle through the sorts",
                 bt_col_info[c].title);
        return;
    }
}

/* A click on a route (its row or one of its warnings) selects it; a second click on
 * the same route within 0.4 s opens its detail. */
static void pick(struct bt_tui *t, int r)
{
    double now = mono_now();
    bool dbl = r == t->click_route && now - t->click_time < 0.4;
    t->sel_route = r;
    t->click_route = dbl ? -1 : r;
    t->click_time = now;
    if (dbl)
        tui_open_detail(t);
}

static void click(struct bt_tui *t, int x, int y, tui_key_fn key)
{
    const struct bt_layout *l = &t->lay;
    if (in(l->fbar, x, y)) {
        for (int i = 0; i < t->nfbar_x; i++)
            if (x >= t->fbar_x[i] && x < t->fbar_x[i + 1]) {
                key(t, t->fbar_key[i]);
                return;
            }
        return;
    }
    if (t->help) {
        if (!in(l->help, x, y))
            t->help = false;
        return;
    }
    if (t->view != BT_VIEW_OVERVIEW)
        return;
    if (y == l->table.y) {
        click_heading(t, x);
        return;
    }
    if (in(l->table, x, y)) {
        int k = t->scroll + (y - l->table.y - 1);
        if (k >= 0 && k < t->nvis)
            pick(t, t->order[k]);
        t->wfocus = false;
        return;
    }
    if (in(l->warnings, x, y) && t->wsc.lines) {
        /* a warning line selects its route; a double click opens it */
        int k = t->wsc.pos + (y - l->warnings.y - 1);
        t->wfocus = true;
        if (y > l->warnings.y && k >= 0 && k < t->wsc.lines && t->lines[k].route >= 0) {
            t->wsel_route = t->lines[k].route; /* the cursor on that warning */
            t->wsel_code = t->lines[k].code;
            pick(t, t->lines[k].route);
        }
    }
}

void tui_mouse(struct bt_tui *t, tui_key_fn key)
{
    MEVENT ev;
    /* every event queued (a burst of input can hold several) */
    for (int guard = 0; guard < 64 && getmouse(&ev) == OK; guard++) {
        if (ev.bstate & BUTTON4_PRESSED)
            wheel(t, ev.y, -1);
        else if (ev.bstate & BUTTON5_PRESSED)
            wheel(t, ev.y, 1);
        else if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
            click(t, ev.x, ev.y, key);
    }
}
