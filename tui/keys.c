#include "tui/keys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

#define CTRL(c) ((c) & 0x1f)

/* Views in both modes, and the replay's own views. */
#define OV (BT_CTX_OVERVIEW | BT_CTX_R_OVERVIEW)
#define DET (BT_CTX_DETAIL | BT_CTX_R_DETAIL)
#define REPLAY (BT_CTX_R_OVERVIEW | BT_CTX_R_DETAIL)

#define HLP (BT_CTX_HELP | BT_CTX_R_HELP)
#define R_OV BT_CTX_R_OVERVIEW
#define SCROLL (OV | DET | HLP)

/* Aliases follow their main entry with an empty help text. */
const struct bt_key bt_keys[] = {
    {'q', "q", "back from detail, help or a list; quit from the overview", BT_CTX_ALL,
     BT_ACT_BACK_OR_QUIT},
    {'Q', "Q", "quit from anywhere (terminal restored)", BT_CTX_ALL, BT_ACT_QUIT},
    {KEY_F(10), "F10", "", BT_CTX_ALL, BT_ACT_QUIT},
    {27, "Esc", "back: close help, leave detail, clear filter", BT_CTX_ALL, BT_ACT_BACK},
    {KEY_LEFT, "Left", "", DET, BT_ACT_BACK},
    {'?', "?", "this help", BT_CTX_ALL, BT_ACT_HELP},
    {KEY_F(1), "F1", "", BT_CTX_ALL, BT_ACT_HELP},
    {'h', "h", "", OV | DET, BT_ACT_HELP},
    /* replay: time controls (the recording is read-only, so m lists markers) */
    {' ', "Space", "play / pause", REPLAY, BT_ACT_PLAY},
    {'p', "p", "", REPLAY, BT_ACT_PLAY},
    {'.', ".", "step one poll forward (pauses)", REPLAY, BT_ACT_STEP_FWD},
    {',', ",", "step one poll back (pauses)", REPLAY, BT_ACT_STEP_BACK},
    {']', "]", "play faster (1x to 1000x; in the detail } only: ] pans)", R_OV, BT_ACT_SPEED_UP},
    {'}', "}", "", REPLAY, BT_ACT_SPEED_UP},
    {'[', "[", "play slower (in the detail { only: [ pans)", R_OV, BT_ACT_SPEED_DOWN},
    {'{', "{", "", REPLAY, BT_ACT_SPEED_DOWN},
    {'g', "g", "go to a time: 14:32, -30m from the end, +5m from the start, or ISO",
     REPLAY, BT_ACT_GOTO},
    {'n', "n", "next warning or throttle", REPLAY, BT_ACT_NEXT_EVENT},
    {'N', "N", "previous warning or throttle", REPLAY, BT_ACT_PREV_EVENT},
    {KEY_HOME, "Home", "start of the recording (in the detail: top of it)", R_OV,
     BT_ACT_REPLAY_START},
    {KEY_END, "End", "end of the recording (in the detail: bottom of it)", R_OV,
     BT_ACT_REPLAY_END},
    {KEY_HOME, "", "", BT_CTX_R_DETAIL | BT_CTX_R_HELP, BT_ACT_HOME},
    {KEY_END, "", "", BT_CTX_R_DETAIL | BT_CTX_R_HELP, BT_ACT_END},
    {'M', "M", "markers: list them, Enter jumps", REPLAY, BT_ACT_MARKERS},
    {'m', "m", "", REPLAY, BT_ACT_MARKERS},
    {KEY_UP, "Up", "previous route; in detail, help, warnings: scroll", SCROLL, BT_ACT_UP},
    {'k', "k", "", SCROLL, BT_ACT_UP},
    {KEY_DOWN, "Down", "next route; in detail, help, warnings: scroll", SCROLL, BT_ACT_DOWN},
    {'j', "j", "", SCROLL, BT_ACT_DOWN},
    {KEY_PPAGE, "PgUp", "page up (routes, detail, help, warnings)", SCROLL, BT_ACT_PGUP},
    {KEY_NPAGE, "PgDn", "page down", SCROLL, BT_ACT_PGDN},
    {KEY_HOME, "Home", "first route; top of detail, help, warnings",
     BT_CTX_LIVE, BT_ACT_HOME},
    {'g', "g", "", BT_CTX_LIVE, BT_ACT_HOME},
    {KEY_END, "End", "last route; bottom of detail, help, warnings",
     BT_CTX_LIVE, BT_ACT_END},
    {'G', "G", "", BT_CTX_LIVE, BT_ACT_END},
    {'\t', "Tab", "move between the route list and the warnings pane (Up/Down pick a "
     "warning there)", OV, BT_ACT_FOCUS},
    {'\n', "Enter", "route detail: warnings and actions, graphs, figures; on a warning: its "
     "whole text in place, again: its route's detail", OV, BT_ACT_OPEN},
    {'\r', "", "", OV, BT_ACT_OPEN},
    {KEY_ENTER, "", "", OV, BT_ACT_OPEN},
    {KEY_RIGHT, "", "", BT_CTX_OVERVIEW, BT_ACT_OPEN},
    {'\t', "Tab", "detail: next route", DET, BT_ACT_NEXT_ROUTE},
    {KEY_BTAB, "S-Tab", "detail: previous route", DET, BT_ACT_PREV_ROUTE},
    {'>', ">", "sort by the next column", OV, BT_ACT_SORT_NEXT},
    {'s', "s", "", OV, BT_ACT_SORT_NEXT},
    {KEY_F(6), "F6", "", OV, BT_ACT_SORT_NEXT},
    {'<', "<", "sort by the previous column", OV, BT_ACT_SORT_PREV},
    {'e', "e", "event log: status changes, warnings raised and cleared, failures, markers",
     OV | DET, BT_ACT_EVENTS},
    {'+', "+", "detail graphs: zoom in (fewer minutes)", DET, BT_ACT_ZOOM_IN},
    {'=', "", "", DET, BT_ACT_ZOOM_IN},
    {'-', "-", "detail graphs: zoom out (more minutes)", DET, BT_ACT_ZOOM_OUT},
    {'[', "[", "detail graphs: pan back in time", DET, BT_ACT_PAN_BACK},
    {']', "]", "detail graphs: pan forward (to now)", DET, BT_ACT_PAN_FWD},
    {'<', "<", "detail graphs: cursor one minute back (reads every graph there)", DET,
     BT_ACT_CURSOR_BACK},
    {'>', ">", "detail graphs: cursor one minute forward (past now: off)", DET,
     BT_ACT_CURSOR_FWD},
    {'I', "I", "invert the sort order", OV, BT_ACT_SORT_REVERSE},
    {'/', "/", "filter by name, model, Region, warning code", OV, BT_ACT_FILTER},
    {KEY_F(4), "F4", "", OV, BT_ACT_FILTER},
    {KEY_F(3), "F3", "search: jump to the next route matching, without filtering", OV,
     BT_ACT_SEARCH},
    {'p', "p", "pause / resume polling", BT_CTX_LIVE, BT_ACT_PAUSE},
    {' ', "Space", "", BT_CTX_OVERVIEW | BT_CTX_DETAIL, BT_ACT_PAUSE},
    {'+', "+", "poll less often (longer interval)", BT_CTX_OVERVIEW, BT_ACT_SLOWER},
    {'-', "-", "poll more often (shorter interval)", BT_CTX_OVERVIEW, BT_ACT_FASTER},
    {'t', "t", "next theme", BT_CTX_ALL, BT_ACT_THEME},
    {'r', "r", "refresh now", BT_CTX_LIVE, BT_ACT_REFRESH},
    {KEY_F(5), "F5", "", BT_CTX_LIVE, BT_ACT_REFRESH},
    {'m', "m", "add a marker with a note to the recording", BT_CTX_LIVE, BT_ACT_MARKER},
    {CTRL('l'), "^L", "redraw the screen", BT_CTX_ALL, BT_ACT_REDRAW},
    {'w', "w", "detail: what-if and the limits to set (bedtop plan)", DET, BT_ACT_PLAN},
    {'$', "$", "spend per Region and the cross-model day: tokens, dollars, run-out", OV | DET,
     BT_ACT_LEDGER},
    {'H', "H", "who holds the route's quota, now and over the last hour (b: by team, tag, "
     "route)", OV | DET, BT_ACT_HOLDERS},
};
const size_t bt_nkeys = BT_ARRAY_LEN(bt_keys);

const struct bt_fkey bt_fbar[] = {
    {KEY_F(1), "Help"}, {KEY_F(3), "Search"}, {KEY_F(4), "Filter"}, {KEY_F(5), "Refresh"},
    {KEY_F(6), "SortBy"}, {KEY_F(10), "Quit"},
};
const size_t bt_nfbar = BT_ARRAY_LEN(bt_fbar);

enum bt_action bt_key_action(int key, unsigned ctx)
{
    for (size_t i = 0; i < bt_nkeys; i++)
        if (bt_keys[i].key == key && (bt_keys[i].contexts & ctx))
            return bt_keys[i].action;
    return BT_ACT_NONE;
}

int bt_keys_help_mode(char lines[][96], int max, unsigned mode)
{
    int n = 0;
    for (size_t i = 0; i < bt_nkeys && n < max; i++) {
        if (!bt_keys[i].help[0] || !(bt_keys[i].contexts & mode))
            continue;
        /* gather the named aliases that follow this entry */
        char names[48];
        bt_strlcpy(names, bt_keys[i].name, sizeof names);
        for (size_t j = i + 1; j < bt_nkeys && !bt_keys[j].help[0]; j++) {
            if (!bt_keys[j].name[0] || bt_keys[j].action != bt_keys[i].action ||
                !(bt_keys[j].contexts & mode))
                continue;
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, ", %s", bt_keys[j].name);
        }
        snprintf(lines[n++], 96, "%-13s %s", names, bt_keys[i].help);
    }
    return n;
}

int bt_keys_help(char lines[][96], int max)
{
    return bt_keys_help_mode(lines, max, BT_CTX_LIVE);
}
