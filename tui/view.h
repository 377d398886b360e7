/* What the dashboard's files share (internal to tui/): the state of one
 * dashboard and the functions each file offers the others. One file per view
 * or concern: draw (primitives), color (theme to attributes), routes (list,
 * filter, sort), labels, bars (header, banner, status), pane (wrapped text),
 * overview, detail, dgraph (detail graphs), timeline (replay), help, input (keys),
 * mouse. */
#ifndef BEDTOP_TUI_VIEW_H
#define BEDTOP_TUI_VIEW_H
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/headroom.h"
#include "tui/graph.h"
#include "tui/layout.h"
#include "tui/theme.h"
#include "tui/tui.h"

enum color_mode { CM_MONO, CM_8, CM_256, CM_DIRECT };

enum sort_key { SORT_STATUS, SORT_HEADROOM, SORT_USED, SORT_THROTTLES, SORT_P99, SORT_INFLIGHT,
                SORT_NAME, SORT_CONFIG, SORT_COUNT };
struct tui_sort {
    const char *name;
    enum bt_col col;       /* the column it sorts by (BT_COL_COUNT: none) */
};
extern const struct tui_sort tui_sort_info[SORT_COUNT];

#define MAX_THEMES 32
#define MAX_WLINES 320

/* A scrolled pane: the first line shown; the largest first line, the lines of a
 * page and the lines in all, as the last draw found them. */
struct tui_scroll {
    int pos, max, page, lines;
};

struct wline {
    char s[400];
    enum bt_role role;
    int lead;              /* the first lead bytes drawn in lead_role */
    enum bt_role lead_role;
    int route;             /* the route the line is about (a click selects it), -1 none */
    int code;              /* the warning it shows (enum bt_wcode), -1 none */
    bool first;            /* the warning's first line (a long one wraps) */
};

/* Each series of the detail graphs has its own glyph, so they are told apart in
 * monochrome and with NO_COLOR (the help's legend lists them). */
struct tui_pattern {
    const char *name;
    uint32_t utf8, ascii;
    enum bt_role role;
};
enum { PAT_QUOTA, PAT_SETTLED, PAT_ESTIMATED, PAT_BOTH, PAT_USED, PAT_THROTTLE, PAT_P50,
       PAT_P99, PAT_INFLIGHT, PAT_LIMIT, PAT_POINT, PAT_NOW, PAT_KNEE, PAT_ADMITTED,
       PAT_RETRIED, PAT_ATHROTTLED, PAT_COMPLETED, PAT_CURSOR, PAT_OTPS, PAT_TTFT, PAT_HOUR,
       PAT_SLOWLINE, TUI_NPAT };
extern const struct tui_pattern tui_patterns[TUI_NPAT];

enum gkind { G_TOKENS, G_MANTLE_OUT, G_THROTTLES, G_OFFERED, G_LATENCY, G_OTPS, G_TTFT,
             G_INFLIGHT, G_OPPOINT };

/* How the dashboard looks: the theme, the terminal's colors, one attribute per role. */
struct tui_look {
    enum color_mode cm;
    bool color_allowed;
    struct bt_theme theme;
    char themes[MAX_THEMES][64];
    int nthemes, theme_idx;
    attr_t attr[BT_ROLE_COUNT];
};

/* What the screen shows now: the dashboard redraws only when one of these changes. */
struct tui_shown {
    uint64_t gen;
    bool recfail;
    int64_t now, next_poll;
    int cols, rows;
    bool paused;
    double interval;
    unsigned state, rversion;
};

struct tui_rowtext;
struct bt_tui {
    struct bt_tui_host *host;
    SCREEN *scr;
    bool active;
    bool utf8;
    struct tui_look look;

    enum bt_view view;
    bool help;
    bool filtering;
    char filter[64];
    enum sort_key sort;
    bool sort_rev;
    int sel_route;         /* selected route index (config order), -1 none */
    int scroll;
    bool quit;
    char msg[160];
    /* a one-line prompt in the status bar: go to a time (replay), a marker's note (live) */
    enum { PR_NONE, PR_GOTO, PR_MARKER } prompt;
    char input[96];
    bool markers_open;     /* replay: the markers list overlay */
    int marker_sel;

    struct bt_eval *evals;
    uint64_t e_gen;        /* evals were computed for this store generation, */
    int64_t e_minute;      /* this minute */
    int e_n;               /* and this many routes */
    uint64_t e_serial;     /* bumped by each evaluation */
    struct bt_eval_groups *groups; /* the config's grouping, renewed as its routes change */
    int *order;            /* visible routes, sorted */
    int nvis;
    uint64_t o_serial;     /* order was built from evaluation o_serial, */
    enum sort_key o_sort;  /* this sort, */
    bool o_rev;
    char o_filter[64];     /* and this filter */
    uint64_t o_version;    /* bumped by each rebuild of order */
    struct tui_rowtext *rowtext; /* per route: its overview cells as text (overview.c) */
    int nrowtext;

    bool drawn;            /* shown holds what is on the screen */
    struct tui_shown shown;
    unsigned state;        /* bumped by every key, mouse event and resize */
    bool repaint;          /* the next draw repaints every cell (after a resize) */
    struct wline lines[MAX_WLINES]; /* the warnings pane being drawn */
    /* the overview's warning lines in `lines` were built from this order version (of
     * this evaluation), width, rows and cursor (tui_overview_warnings): a redraw that
     * changes none of them reuses them; cleared where anything else writes `lines` */
    struct tui_wkey {
        bool valid;
        uint64_t o_version;
        int width, rows, n;
        bool wfocus;
        int wsel_route, wsel_code, wexp_route, wexp_code;
    } wkey;
    struct wline help_lines[MAX_WLINES];
    struct wline fig_lines[MAX_WLINES]; /* the detail's figures */
    struct tui_scroll wsc, dsc, hsc; /* overview warnings, detail document, help */
    bool wfocus;           /* the overview's keys scroll the warnings pane */
    struct bt_layout lay;  /* the layout on screen (the mouse maps onto it) */
    int fbar_x[16], fbar_key[16], nfbar_x; /* F-key bar: where each key starts (its end
                                            * last) and which key it is */
    struct tui_plan *plan; /* the detail view's what-if overlay (tui/plan.c), NULL closed */
    int click_route;       /* the route clicked last and when: a second click is a double */
    double click_time;
    /* the overview's warnings pane: the warning under the cursor (route, code) while it
     * has the focus, and the one expanded in place (Enter) */
    int wsel_route, wsel_code, wexp_route, wexp_code;
    bool wexp_reveal;        /* the next draw scrolls the expanded warning into view */
    /* the event log: the dashboard's own (live) or the replay's (host->evlog) */
    struct bt_evlog own_log;
    bool bell;
    bool events_open;      /* the event log overlay (e) */
    int64_t *crit_seen;    /* replay: per route, the last crit minute up to crit_now */
    int64_t crit_now;      /* ... for this position, */
    uint64_t crit_gen;     /* this log generation */
    int crit_n;            /* and this many routes */
    struct tui_scroll esc;
    struct wline ev_lines[MAX_WLINES];
    bool ledger_open;      /* the spend and cross-model day overlay ($, tui/ledger.c) */
    struct tui_scroll lsc;
    struct wline scratch[MAX_WLINES]; /* a warning's lines, measured before they are placed */
    /* F3: search jumps to the next route matching, without filtering (htop's) */
    bool searching;
    char search[64];
    /* the detail's graphs: minutes shown (0: as the width gives), minutes back from
     * now (pan), a cursor that reads the values at one minute (-1 none) */
    int gspan, goff, gcursor;
};

static inline attr_t A(const struct bt_tui *t, enum bt_role r)
{
    return t->look.attr[r];
}

/* draw.c */
void tui_draw_utf8(bool on);
void tui_clip(int top, int bottom, int yoff);
void tui_unclip(void);
int tui_width(const char *s);
int tui_text(int y, int x, int w, const char *s, attr_t a);
int tui_text_cut(int y, int x, int w, const char *s, attr_t a);
int tui_text_word(int y, int x, int w, const char *s, attr_t a);
void tui_fill(int y, int x, int w, attr_t a);
void tui_glyph(int y, int x, uint32_t cp, attr_t a);
void tui_rule(const struct bt_tui *t, int y, int x, int w, const char *title);
void tui_blit(const struct bt_tui *t, const struct bt_canvas *cv, int y, int x);
void tui_blit_attr(const struct bt_canvas *cv, int y, int x, attr_t a);
void tui_box(const struct bt_tui *t, struct bt_rect h, const char *title, attr_t a);

/* color.c */
void tui_apply_theme(struct bt_tui *t);
void tui_load_theme(struct bt_tui *t, const char *name);

/* routes.c */
int tui_sev_rank(enum bt_status s);
bool tui_contains(const char *hay, const char *needle); /* case-insensitive */
void tui_evaluate(struct bt_tui *t);
int tui_sel_pos(const struct bt_tui *t);
void tui_move_sel(struct bt_tui *t, int delta);
/* What a key or a click on a pane does to the selection, beneath the key dispatcher
 * (input.c) and the panes it hands keys to: move it, say the sort, open its detail. */
void tui_select_by(struct bt_tui *t, int delta);
void tui_sort_msg(struct bt_tui *t);
void tui_open_detail(struct bt_tui *t);

/* labels.c */
void tui_fmt_age(int64_t s, char *o, size_t n);
const char *tui_status_label(enum bt_status s);
enum bt_role tui_status_role(enum bt_status s);
enum bt_role tui_sev_role(enum bt_status s);
const char *tui_sev_label(enum bt_status s);
bool tui_estimate_only(const struct bt_eval *e);

/* bars.c */
/* "data 10:13 · now 10:16" (replay: "seen"); full: ISO data minute, clock to the second. */
void tui_clock_label(const struct bt_tui *t, bool full, char *out, size_t n);
void tui_draw_header(struct bt_tui *t, const struct bt_layout *l);
void tui_draw_banner(struct bt_tui *t, const struct bt_layout *l, int only_route);
void tui_draw_status(struct bt_tui *t, const struct bt_layout *l);
void tui_status_text(const struct bt_tui *t, char *out, size_t n);
void tui_draw_fbar(struct bt_tui *t, const struct bt_layout *l);

/* pane.c */
void tui_add_wline(struct wline *lines, int *n, enum bt_role role, const char *s, int lead,
                   enum bt_role lead_role);
void tui_wrap(struct wline *lines, int *n, const char *s, int w, int indent, enum bt_role role);
void tui_entry(struct wline *lines, int *n, int width, const char *name, const char *text,
               enum bt_role role);
void tui_draw_lines(struct bt_tui *t, struct bt_rect r, const struct wline *lines, int n,
                    struct tui_scroll *sc);
void tui_scroll_pos(const struct tui_scroll *sc, int shown, char *out, size_t n);
/* Moves a scrolled pane; says so when it cannot move (every pane's Up/Down/pages). */
void tui_scroll_pane(struct bt_tui *t, struct tui_scroll *sc, int delta, const char *what);
/* An overlay's position in its bottom border: " 1-20/98  KEYS ". */
void tui_box_scroll_tag(struct bt_rect box, const struct tui_scroll *sc, int shown,
                        const char *keys, attr_t a);
void tui_draw_wlines(struct bt_tui *t, struct bt_rect area, const char *title,
                     const struct wline *lines, int n, struct tui_scroll *sc, bool focus);

/* events.c (tui) */
const struct bt_evlog *tui_log(const struct bt_tui *t);
void tui_feed_log(struct bt_tui *t);
bool tui_was_crit(struct bt_tui *t, int r);
void tui_draw_events(struct bt_tui *t, const struct bt_layout *l);
void tui_events_key(struct bt_tui *t, int c);
/* ledger.c: `$`, spend and the cross-model day per Region */
void tui_draw_ledger(struct bt_tui *t, const struct bt_layout *l);
void tui_ledger_key(struct bt_tui *t, int c);
#define TUI_CRIT_MARK_MIN 15 /* a route crit in the last this many minutes keeps a mark */

/* overview.c */
void tui_draw_action(struct bt_tui *t, const struct bt_layout *l);
/* routes.c: what the overview's bar draws (v against total) and the sort reads; the
 * side drawn when it is not the token side (the bar is tagged), else BT_SIDE_COUNT */
enum bt_side tui_bar_values(const struct bt_eval *e, double v[BT_SEG_COUNT], double *total);
double tui_bar_fraction(const struct bt_eval *e);
void tui_warning_enter(struct bt_tui *t);
void tui_warning_move(struct bt_tui *t, int delta);
int tui_overview_warnings(struct bt_tui *t, struct wline *lines, int width, int rows);
/* The lines [*first, *last] of the expanded warning among the n of t->lines; false when
 * it is not shown. */
bool tui_expanded_lines(const struct bt_tui *t, int n, int *first, int *last);
void tui_draw_overview(struct bt_tui *t, const struct bt_layout *l, int nw);
void tui_overview_tick(struct bt_tui *t, const struct bt_layout *l);
void tui_overview_free(struct bt_tui *t);

/* dgraph.c */
void tui_graph_key(struct bt_tui *t, int action);
int tui_detail_graphs(const struct bt_tui *t, int r, enum gkind *g);
void tui_draw_graph(struct bt_tui *t, int r, enum gkind g, struct bt_rect a);

/* detail.c */
int tui_detail_warnings(struct bt_tui *t, int r, int width, struct wline *lines);
int tui_detail_figures(struct bt_tui *t, int r, int width, struct wline *lines);
void tui_draw_detail(struct bt_tui *t, const struct bt_layout *l, int nw, const enum gkind *gk);

/* timeline.c */
void tui_draw_timeline(struct bt_tui *t, const struct bt_layout *l);
void tui_draw_markers(struct bt_tui *t, const struct bt_layout *l);

/* help.c */
int tui_help_build(struct bt_tui *t, int width);
void tui_draw_help(struct bt_tui *t, const struct bt_layout *l, int n);
void tui_draw_too_small(struct bt_tui *t, int cols, int rows);

/* input.c */
void tui_replay_seek(struct bt_tui *t, int64_t to);
void tui_markers_key(struct bt_tui *t, int c);

/* plan.c: `w`, the what-if and the limits to set */
void tui_plan_open(struct bt_tui *t);
void tui_plan_close(struct bt_tui *t);
void tui_plan_key(struct bt_tui *t, int c);
void tui_plan_draw(struct bt_tui *t, const struct bt_layout *l);

/* holders.c: `H`, who holds the selected route's quota group, now and over the hour */
bool tui_holders_open(void);
void tui_holders_toggle(struct bt_tui *t);
void tui_holders_key(struct bt_tui *t, int c);
void tui_draw_holders(struct bt_tui *t, const struct bt_layout *l);

/* mouse.c: the events queued; a click on the F-key bar presses its key through key,
 * the dispatcher's (input.c hands it down: mouse.c sits beneath it) */
typedef void (*tui_key_fn)(struct bt_tui *t, int c);
void tui_mouse(struct bt_tui *t, tui_key_fn key);
#endif
