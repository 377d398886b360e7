/* The one key table: every binding with its name, help text and the views
 * it works in. The help overlay is generated from it (tmux's command table habit). */
#ifndef BEDTOP_KEYS_H
#define BEDTOP_KEYS_H
#include <stddef.h>

enum bt_action {
    BT_ACT_NONE, BT_ACT_QUIT, BT_ACT_BACK, BT_ACT_BACK_OR_QUIT, BT_ACT_HELP, BT_ACT_FOCUS, BT_ACT_UP, BT_ACT_DOWN, BT_ACT_PGUP,
    BT_ACT_PGDN, BT_ACT_HOME, BT_ACT_END, BT_ACT_OPEN, BT_ACT_PREV_ROUTE, BT_ACT_NEXT_ROUTE,
    BT_ACT_SORT_NEXT, BT_ACT_SORT_PREV, BT_ACT_SORT_REVERSE, BT_ACT_FILTER, BT_ACT_PAUSE,
    BT_ACT_FASTER, BT_ACT_SLOWER, BT_ACT_THEME, BT_ACT_REFRESH, BT_ACT_MARKER, BT_ACT_REDRAW,
    /* replay */
    BT_ACT_PLAY, BT_ACT_STEP_FWD, BT_ACT_STEP_BACK, BT_ACT_SPEED_UP, BT_ACT_SPEED_DOWN,
    BT_ACT_GOTO, BT_ACT_NEXT_EVENT, BT_ACT_PREV_EVENT, BT_ACT_REPLAY_START, BT_ACT_REPLAY_END,
    BT_ACT_MARKERS, BT_ACT_PLAN, BT_ACT_LEDGER,
    /* both */
    BT_ACT_EVENTS, BT_ACT_SEARCH, BT_ACT_ZOOM_IN, BT_ACT_ZOOM_OUT, BT_ACT_PAN_BACK,
    BT_ACT_PAN_FWD, BT_ACT_CURSOR_BACK, BT_ACT_CURSOR_FWD,
    BT_ACT_HOLDERS,
};

/* A context is a (view, mode) pair, one bit each, so a key may mean one thing
 * in the live dashboard and another in replay (Home: first route / start). */
enum {
    BT_CTX_OVERVIEW = 1, BT_CTX_DETAIL = 2, BT_CTX_HELP = 4,          /* live dashboard */
    BT_CTX_R_OVERVIEW = 8, BT_CTX_R_DETAIL = 16, BT_CTX_R_HELP = 32,  /* replay */
    BT_CTX_LIVE = 7, BT_CTX_REPLAY = 56, BT_CTX_ALL = 63,
};

struct bt_key {
    int key;              /* curses key code or character */
    const char *name;     /* as shown in the help: "q", "Enter", "F1" */
    const char *help;     /* empty: an alias, shown on the line above it */
    unsigned contexts;
    enum bt_action action;
};

extern const struct bt_key bt_keys[];
extern const size_t bt_nkeys;

/* The F-key bar (htop's), shown on wide terminals: key and label, in order. */
struct bt_fkey {
    int key;
    const char *label;
};
extern const struct bt_fkey bt_fbar[];
extern const size_t bt_nfbar;

/* The action bound to key in context ctx (BT_ACT_NONE if none). */
enum bt_action bt_key_action(int key, unsigned ctx);
/* Help lines of the live dashboard generated from the table: "q            quit";
 * aliases joined ("?, F1"). Returns the number of lines, writing at most max. */
int bt_keys_help(char lines[][96], int max);
/* The same for the keys that work in mode (BT_CTX_LIVE or BT_CTX_REPLAY). */
int bt_keys_help_mode(char lines[][96], int max, unsigned mode);
#endif
