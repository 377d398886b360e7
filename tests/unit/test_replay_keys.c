/* Replay's keys in the one key table: the same key means one thing live and
 * another in replay, the help of each mode lists only its keys, and the
 * replay's timeline row fits every size without overlapping the panes. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#undef OK /* curses' OK; the harness has its own */
#include "tests/tap.h"
#include "tui/keys.h"
#include "tui/layout.h"

static bool has_line(char lines[][96], int n, const char *prefix)
{
    for (int i = 0; i < n; i++)
        if (!strncmp(lines[i], prefix, strlen(prefix)))
            return true;
    return false;
}

static bool overlap(struct bt_rect a, struct bt_rect b)
{
    if (!a.w || !a.h || !b.w || !b.h)
        return false;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

int main(void)
{
    /* live: Home first route, g table top, m marker, Space pause, + interval */
    OK(bt_key_action(KEY_HOME, BT_CTX_OVERVIEW) == BT_ACT_HOME, "live Home: first route");
    OK(bt_key_action('g', BT_CTX_OVERVIEW) == BT_ACT_HOME, "live g: first route");
    OK(bt_key_action('m', BT_CTX_OVERVIEW) == BT_ACT_MARKER, "live m: add a marker");
    OK(bt_key_action(' ', BT_CTX_DETAIL) == BT_ACT_PAUSE, "live Space: pause polling");
    OK(bt_key_action('+', BT_CTX_OVERVIEW) == BT_ACT_SLOWER, "live +: longer interval");
    OK(bt_key_action('n', BT_CTX_OVERVIEW) == BT_ACT_NONE, "live n: nothing");
    /* replay: the same keys move in time; the file is read-only */
    OK(bt_key_action(KEY_HOME, BT_CTX_R_OVERVIEW) == BT_ACT_REPLAY_START, "replay Home: start");
    /* issue 22: End inside the detail scrolls its document; the clock does not jump */
    OK(bt_key_action(KEY_END, BT_CTX_R_OVERVIEW) == BT_ACT_REPLAY_END, "replay End: end");
    OK(bt_key_action(KEY_END, BT_CTX_R_DETAIL) == BT_ACT_END &&
           bt_key_action(KEY_HOME, BT_CTX_R_DETAIL) == BT_ACT_HOME,
       "replay End, Home (detail): bottom and top of the document, not the clock");
    OK(bt_key_action('[', BT_CTX_R_DETAIL) == BT_ACT_PAN_BACK &&
           bt_key_action('}', BT_CTX_R_DETAIL) == BT_ACT_SPEED_UP &&
           bt_key_action('+', BT_CTX_DETAIL) == BT_ACT_ZOOM_IN &&
           bt_key_action('+', BT_CTX_OVERVIEW) == BT_ACT_SLOWER,
       "detail: [ ] pan and + - zoom the graphs; { } change the replay's speed there");
    OK(bt_key_action(KEY_F(3), BT_CTX_OVERVIEW) == BT_ACT_SEARCH &&
           bt_key_action(KEY_F(4), BT_CTX_OVERVIEW) == BT_ACT_FILTER &&
           bt_key_action('/', BT_CTX_OVERVIEW) == BT_ACT_FILTER,
       "F3 searches, F4 and / filter (F3 is not a third filter key)");
    OK(bt_key_action('g', BT_CTX_R_OVERVIEW) == BT_ACT_GOTO, "replay g: go to a time");
    OK(bt_key_action('m', BT_CTX_R_OVERVIEW) == BT_ACT_MARKERS, "replay m: markers list");
    OK(bt_key_action('M', BT_CTX_R_DETAIL) == BT_ACT_MARKERS, "replay M: markers list");
    OK(bt_key_action(' ', BT_CTX_R_OVERVIEW) == BT_ACT_PLAY &&
           bt_key_action('p', BT_CTX_R_DETAIL) == BT_ACT_PLAY, "replay Space, p: play/pause");
    OK(bt_key_action('.', BT_CTX_R_OVERVIEW) == BT_ACT_STEP_FWD &&
           bt_key_action(',', BT_CTX_R_OVERVIEW) == BT_ACT_STEP_BACK, "replay . and ,: step");
    OK(bt_key_action(']', BT_CTX_R_OVERVIEW) == BT_ACT_SPEED_UP &&
           bt_key_action('[', BT_CTX_R_OVERVIEW) == BT_ACT_SPEED_DOWN, "replay ] and [: speed");
    OK(bt_key_action('n', BT_CTX_R_OVERVIEW) == BT_ACT_NEXT_EVENT &&
           bt_key_action('N', BT_CTX_R_OVERVIEW) == BT_ACT_PREV_EVENT, "replay n and N");
    OK(bt_key_action('+', BT_CTX_R_OVERVIEW) == BT_ACT_NONE &&
           bt_key_action('r', BT_CTX_R_OVERVIEW) == BT_ACT_NONE, "replay: no interval, no refresh");
    /* keys common to both modes stay */
    OK(bt_key_action('j', BT_CTX_R_OVERVIEW) == BT_ACT_DOWN &&
           bt_key_action('\n', BT_CTX_R_OVERVIEW) == BT_ACT_OPEN &&
           bt_key_action('q', BT_CTX_R_HELP) == BT_ACT_BACK_OR_QUIT &&
           bt_key_action('Q', BT_CTX_R_DETAIL) == BT_ACT_QUIT, "replay keeps j, Enter, q, Q");
    /* q backs out (k9s, lazygit); Q and F10 quit from anywhere; Left leaves the detail */
    OK(bt_key_action('q', BT_CTX_DETAIL) == BT_ACT_BACK_OR_QUIT &&
           bt_key_action('Q', BT_CTX_DETAIL) == BT_ACT_QUIT &&
           bt_key_action(KEY_F(10), BT_CTX_HELP) == BT_ACT_QUIT &&
           bt_key_action(KEY_LEFT, BT_CTX_DETAIL) == BT_ACT_BACK &&
           bt_key_action(KEY_F(1), BT_CTX_DETAIL) == BT_ACT_HELP, "q back, Q/F10 quit, Left back, F1");
    OK(bt_key_action(KEY_NPAGE, BT_CTX_HELP) == BT_ACT_PGDN &&
           bt_key_action(KEY_END, BT_CTX_DETAIL) == BT_ACT_END &&
           bt_key_action(KEY_DOWN, BT_CTX_R_DETAIL) == BT_ACT_DOWN, "help and detail scroll");
    for (size_t i = 0; i < bt_nfbar; i++)
        OK(bt_key_action(bt_fbar[i].key, BT_CTX_OVERVIEW) != BT_ACT_NONE,
           "F-key bar: %s is bound", bt_fbar[i].label);

    char live[64][96], rp[64][96];
    int nl = bt_keys_help_mode(live, 64, BT_CTX_LIVE);
    int nr = bt_keys_help_mode(rp, 64, BT_CTX_REPLAY);
    OK(nl == bt_keys_help(rp, 64) && nl > 10, "bt_keys_help is the live help (%d lines)", nl);
    nr = bt_keys_help_mode(rp, 64, BT_CTX_REPLAY);
    OK(has_line(live, nl, "p, Space ") && has_line(live, nl, "Home, g ") &&
           has_line(live, nl, "m ") && !has_line(live, nl, "n "), "live help: its own keys only");
    OK(has_line(rp, nr, "Space, p ") && has_line(rp, nr, "Home ") && has_line(rp, nr, "g ") &&
           has_line(rp, nr, "M, m ") && has_line(rp, nr, "n ") && has_line(rp, nr, "N ") &&
           has_line(rp, nr, ". ") && has_line(rp, nr, "] ") && has_line(rp, nr, "[ "),
       "replay help: time controls");
    bool interval = false;
    for (int i = 0; i < nr; i++)
        interval |= strstr(rp[i], "poll less often") != NULL;
    OK(!interval && !has_line(rp, nr, "r ") && !has_line(rp, nr, "Home, g "),
       "replay help: no live-only keys");

    /* the timeline: one row right above the status bar, apart from the other panes */
    int bad = 0;
    for (int rows = BT_LAYOUT_MIN_ROWS; rows <= 80; rows++)
        for (int cols = BT_LAYOUT_MIN_COLS; cols <= 250; cols += 7)
            for (int view = 0; view < 2; view++) {
                struct bt_layout_opts o = {.view = (enum bt_view)view, .banner = rows % 2,
                                           .nroutes = 200, .nwarn_lines = 40, .ngraphs = 6,
                                           .timeline = true};
                struct bt_layout l;
                bt_layout_compute(cols, rows, &o, &l);
                /* right above the status bar, which sits above the F-key bar if any */
                bool ok = l.timeline.h == 1 && l.timeline.y == rows - 2 - l.fbar.h &&
                          l.timeline.w == cols && !overlap(l.timeline, l.table) &&
                          !overlap(l.timeline, l.info) && !overlap(l.timeline, l.body) &&
                          !overlap(l.timeline, l.status) && !overlap(l.timeline, l.fbar);
                if (view == BT_VIEW_OVERVIEW)
                    ok = ok && !overlap(l.timeline, l.warnings);
                if (!ok && bad++ < 3)
                    printf("# timeline at %dx%d view %d: y %d h %d\n", cols, rows, view,
                           l.timeline.y, l.timeline.h);
            }
    OK(bad == 0, "timeline row fits every size from 60x12 up (%d bad)", bad);
    struct bt_layout l;
    struct bt_layout_opts live_o = {.view = BT_VIEW_OVERVIEW, .nroutes = 3};
    bt_layout_compute(80, 24, &live_o, &l);
    OK(l.timeline.h == 0, "live dashboard: no timeline row");
    return tap_done();
}
